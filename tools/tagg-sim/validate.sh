#!/bin/sh
# validate.sh - ranks the placement strategies twice on a small case that runs
# on this machine: simulated by tagg-sim, and measured by tagg-bench through
# the tagg VFD (engine strategy set in the configuration, emulated nodes from
# the same topology file).  Prints both rankings side by side.
#
#   tools/tagg-sim/validate.sh BUILD_DIR [NRANKS] [PARTICLES] [REPS]
#
# Needs a build with the plugins (HDF5 + MPI), mpiexec on PATH and
# LD_LIBRARY_PATH set for HDF5.  On a 2-core host the measured ranking is
# mostly noise between strategies that move the same bytes: read the spread.
set -eu
BUILD=${1:?usage: validate.sh BUILD_DIR [NRANKS] [PARTICLES] [REPS]}
NP=${2:-4}
PARTICLES=${3:-200000}
REPS=${4:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TOPO=${TOPO:-$ROOT/tests/engine/two-vnodes.topo}
TIERS=${TIERS:-$ROOT/model/examples/localhost.tiers}
STRATS="memory-aware topo-aware shortest longest first-per-node random"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

for t in "$BUILD/tools/tagg-sim/tagg-sim" "$BUILD/tools/tagg-bench"; do
  [ -x "$t" ] || { echo "validate.sh: $t not built" >&2; exit 1; }
done

echo "== simulated (tagg-sim, $TOPO, hacc:$PARTICLES per rank) =="
"$BUILD/tools/tagg-sim/tagg-sim" --topology "$TOPO" --tiers "$TIERS" --pattern "hacc:$PARTICLES" \
  --strategies "$(echo $STRATS | tr ' ' ',')" --op both --resolution 0 --csv "$OUT/sim.csv" --quiet >/dev/null

echo "== measured (tagg-bench, $NP ranks, $REPS repetitions, TAGG topology=$TOPO) =="
extra=""
for s in $STRATS; do extra="$extra --extra-tagg $s=strategy=$s;topology=$TOPO"; done
export HDF5_PLUGIN_PATH="$BUILD/plugins"
# shellcheck disable=SC2086
mpiexec -n "$NP" "$BUILD/tools/tagg-bench" --kernel hacc --particles "$PARTICLES" \
  --variants mpiio-coll --reps "$REPS" --fsync --csv "$OUT/bench.csv" $extra >"$OUT/bench.txt" 2>"$OUT/bench.err" || {
  echo "validate.sh: tagg-bench failed:" >&2; cat "$OUT/bench.err" >&2; exit 1; }

# rankings: strategy, value; sim bandwidth GiB/s, bench median MiB/s with min-max
for op in write read; do
  echo
  echo "-- $op: rank, simulated (GiB/s) | measured median (MiB/s) [min..max over $REPS reps]"
  awk -F, -v op="$op" 'NR > 1 && $1 == op { print $6, $9 }' "$OUT/sim.csv" | sort -k2 -g -r > "$OUT/s.$op"
  col=$([ "$op" = write ] && echo 9 || echo 11)
  for s in $STRATS; do
    med=$(awk -F, -v s="$s" -v c="$col" '$4 == s && $5 == "median" { print $c }' "$OUT/bench.csv")
    lo=$(awk -F, -v s="$s" -v c="$col" '$4 == s && $5 == "min" { print $c }' "$OUT/bench.csv")
    hi=$(awk -F, -v s="$s" -v c="$col" '$4 == s && $5 == "max" { print $c }' "$OUT/bench.csv")
    echo "$s ${med:-nan} ${lo:-nan} ${hi:-nan}"
  done | sort -k2 -g -r > "$OUT/m.$op"
  paste -d' ' "$OUT/s.$op" "$OUT/m.$op" | awk '{ printf "%d  %-15s %8.3f | %-15s %9s [%s..%s]\n", NR, $1, $2, $3, $4, $5, $6 }'
done
echo
echo "mpiio-coll (reference):"
grep -E "mpiio-coll" "$OUT/bench.txt" | head -2 || true
