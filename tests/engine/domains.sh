#!/usr/bin/env bash
# The engine's file domains through HDF5 and the plugin (tagg-bench, 2 ranks,
# two aggregators forced): VPIC AoS with 32K particles a rank reads 2 MiB per
# call after HDF5's header, the range [0, 2 MiB + 4 KiB). The shared layout's
# domains are balanced: 1 MiB + 64 KiB each (whole 1 MiB blocks would give one
# aggregator 2 MiB and the other 4 KiB, session 50), and every aggregated call
# uses both aggregators; the subfile layout never cuts its 4 MiB stripe.
# Every run reads back what it wrote (tagg-bench verifies byte for byte).
# Environment: MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR.
set -u
work=$1; mkdir -p "$work"; cd "$work" || exit 1
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
run() { # name want-line-regex tagg-config: every aggregated read call's verbose line matches
  local name=$1 want=$2 cfg=$3 n m
  HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG 2 ${PREFLAGS:-} "$BENCH" --reps 1 --dir "$work" \
    --variants tagg-shared --tagg-config "verbose=2;aggregators=2;$cfg" --kernel vpic --layout aos --particles 32768 \
    > out.txt 2>&1 < /dev/null
  local rc=$?
  if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "$name: tagg-bench exit $rc"; cat out.txt; return; fi
  n=$(grep -c '^tagg: read call range=' out.txt)
  m=$(grep '^tagg: read call range=' out.txt | grep -c -E "$want")
  if [ "$n" -ge 8 ] && [ "$n" = "$m" ]; then ok "$name: $n aggregated reads, each '$want', data verified"
  else bad "$name: $m of $n aggregated reads match '$want'"; grep '^tagg: read call' out.txt | head -3; fi
}
run "shared layout: two balanced domains" 'range=\[0,2101248\) domains=2 domain_size=1114112 .*aggregators=0,1 ' ""
run "shared layout, block=512K: the same balance from a 512 KiB block" \
  'range=\[0,2101248\) domains=2 domain_size=1114112 .*aggregators=0,1 ' "block=512K"
run "subfile layout: one whole 4 MiB stripe" 'domains=1 domain_size=4194304 ' "layout=subfiles"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
