#!/usr/bin/env bash
# Aggregation by message size: a collective call in which every rank asks for
# one run of at least a block goes straight to storage (aggr_*_calls=0), a call
# with smaller requests goes through aggregators (aggr_*_calls>0), and a set
# aggregator count always aggregates. Every run reads back what it wrote
# (tagg-bench verifies byte for byte). Environment: MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR.
set -u
work=$1; mkdir -p "$work"; cd "$work" || exit 1
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
run() { # name want(zero|nonzero) tagg-config bench-args...
  local name=$1 want=$2 cfg=$3; shift 3
  rm -f sum.txt
  HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG 4 ${PREFLAGS:-} "$BENCH" --reps 1 --dir "$work" \
    --variants tagg-shared --tagg-config "summary=$work/sum.txt${cfg:+;$cfg}" "$@" > out.txt 2>&1
  local rc=$? line w r
  line=$(grep 'raw_write_bytes=[1-9]' sum.txt | head -1)
  w=$(tr ' ' '\n' <<<"$line" | sed -n 's/^aggr_write_calls=//p'); r=$(grep 'raw_read_bytes=[1-9]' sum.txt | head -1 | tr ' ' '\n' | sed -n 's/^aggr_read_calls=//p')
  if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "$name: tagg-bench exit $rc"; cat out.txt; return; fi
  if [ -z "$w" ] || [ -z "$r" ]; then bad "$name: no summary"; cat sum.txt; return; fi
  if { [ "$want" = zero ] && [ "$w" = 0 ] && [ "$r" = 0 ]; } || { [ "$want" = nonzero ] && [ "$w" -gt 0 ] && [ "$r" -gt 0 ]; }
  then ok "$name: aggr_write_calls=$w aggr_read_calls=$r, data verified"
  else bad "$name: aggr_write_calls=$w aggr_read_calls=$r, want $want"; fi
}
run "4 x 2 MiB contiguous (>= block 1M): direct" zero "" --kernel array1d --dist uniform --size 2M
run "4 x 2 MiB with block=4M: aggregated" nonzero "block=4M" --kernel array1d --dist uniform --size 2M
run "4 x 2 MiB with aggregators=2: aggregated" nonzero "aggregators=2" --kernel array1d --dist uniform --size 2M
run "random 0..100 KiB per rank: aggregated" nonzero "" --kernel array1d --dist random --size 100K
run "S3D blocks (strided rows): aggregated" nonzero "" --kernel s3d --grid 8 8 8
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
