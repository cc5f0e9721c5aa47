#!/usr/bin/env python3
"""One-way flow in core/ (issue 13): no .c file calls back into a file that
calls it. From the object files (nm): file A depends on file B when A uses a
symbol B defines (a call, or a reference to B's ops table); prints the graph
and every cycle, exits 1 when there is one.
    one_way_calls.py OBJECT..."""
import subprocess, sys, os, itertools
objs = sys.argv[1:]
defs, uses = {}, {}
for o in objs:
    name = os.path.basename(o).split('.')[0] + '.c'
    out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
    d, u = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDRB': d.add(parts[2])
        elif len(parts) == 2 and parts[0] == 'U': u.add(parts[1])
    defs[name], uses[name] = d, u
owner = {s: f for f, ds in defs.items() for s in ds}
edges = {f: sorted({owner[s] for s in uses[f] if s in owner and owner[s] != f}) for f in defs}
# cycles: DFS
cycles = []
def dfs(start, node, path, seen):
    for n in edges[node]:
        if n == start: cycles.append(path + [n])
        elif n not in seen and n > start:
            dfs(start, n, path + [n], seen | {n})
for f in sorted(edges): dfs(f, f, [f], {f})
for f in sorted(edges): print('%-20s -> %s' % (f, ' '.join(edges[f])))
for c in cycles: print('CYCLE: ' + ' -> '.join(c))
print('%d cycles' % len(cycles))
sys.exit(1 if cycles else 0)
