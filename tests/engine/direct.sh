#!/usr/bin/env bash
# Aggregate only when it pays (issue 13): the cost model compares each rank
# accessing its own runs with aggregation, using the target's latency and
# bandwidth by request size (the tier file's 'request' lines, tagg-calibrate).
# One large run per rank goes straight to storage (aggr_*_calls=0), many small
# strided runs go through aggregators (aggr_*_calls>0); aggregate=always|never
# and a set aggregator count force the choice; a tier file that makes small
# requests as cheap as large ones turns the strided case direct, and one where
# only reads are cheap (its 'read_request' lines) makes the same pattern
# aggregate its writes and read directly; the subfile layout's reads, which
# check each block (or, without block checksums, each stripe) a rank touches
# whole, aggregate where the ranks share stripes without blocks. Every run reads
# back what it wrote (tagg-bench verifies byte for byte). Environment: MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR.
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
  if { [ "$want" = zero ] && [ "$w" = 0 ] && [ "$r" = 0 ]; } || { [ "$want" = nonzero ] && [ "$w" -gt 0 ] && [ "$r" -gt 0 ]; } ||
     { [ "$want" = writes ] && [ "$w" -gt 0 ] && [ "$r" = 0 ]; } || { [ "$want" = reads ] && [ "$w" = 0 ] && [ "$r" -gt 0 ]; }
  then ok "$name: aggr_write_calls=$w aggr_read_calls=$r, data verified"
  else bad "$name: aggr_write_calls=$w aggr_read_calls=$r, want $want"; fi
}
cat > cheap.tiers <<'TIERS'
tagg-tiers 1
tier DRAM kind=DRAM latency=100ns bandwidth=10GB/s capacity=2GB persistency=none source
tier FS kind=PFS latency=1ns bandwidth=1000GB/s capacity=100GB persistency=permanent target
request 4K latency=1ns bandwidth=1000GB/s
request 4M latency=1ns bandwidth=1000GB/s
TIERS
cat > cheapreads.tiers <<'TIERS'
tagg-tiers 1
tier DRAM kind=DRAM latency=100ns bandwidth=10GB/s capacity=2GB persistency=none source
tier FS kind=PFS latency=1ms bandwidth=1000GB/s capacity=100GB persistency=permanent target
request 4K latency=1ms bandwidth=1000GB/s
request 4M latency=1ms bandwidth=1000GB/s
read_request 4K latency=1ns bandwidth=1000GB/s
read_request 4M latency=1ns bandwidth=1000GB/s
TIERS
run "4 x 2 MiB contiguous: direct (model)" zero "" --kernel array1d --dist uniform --size 2M
run "4 x 2 MiB with aggregate=always: aggregated" nonzero "aggregate=always" --kernel array1d --dist uniform --size 2M
run "4 x 2 MiB with aggregators=2: aggregated" nonzero "aggregators=2" --kernel array1d --dist uniform --size 2M
run "random 0..100 KiB per rank (one run each): direct (model)" zero "" --kernel array1d --dist random --size 100K
run "random 0..100 KiB per rank with aggregate=always: aggregated" nonzero "aggregate=always" --kernel array1d --dist random --size 100K
run "S3D blocks (strided rows): aggregated (model)" nonzero "" --kernel s3d --grid 8 8 8
run "S3D blocks with aggregate=never: direct" zero "aggregate=never" --kernel s3d --grid 8 8 8
run "S3D blocks, target with no request latency (tier file): direct (model)" zero "tiers=$work/cheap.tiers" --kernel s3d --grid 8 8 8
run "S3D blocks, reads cheap and writes not (read_request lines): writes aggregated, reads direct" writes "tiers=$work/cheapreads.tiers" --kernel s3d --grid 8 8 8
# The subfile layout checks what a rank reads against the index (verify=1): by
# the block (format 4, a sixteenth of the stripe: 256 KiB of the default 4 MiB),
# so four ranks reading their 0..100 KiB read a block or two each, directly;
# where the stripe has no block checksums (a stripe size whose sixteenth is not
# a multiple of 4 KiB) a stripe is read whole the first time a rank reads it:
# four ranks would read it four times, one aggregator reads it once; with
# verify=0 the reads read what they ask, as in the shared layout.
run "random 0..100 KiB per rank, subfiles (256 KiB blocks): direct (model)" zero "layout=subfiles" --kernel array1d --dist random --size 100K
run "random 0..100 KiB per rank, subfiles without blocks (stripe_size=4100K): writes direct, reads aggregated (stripes read whole)" reads "layout=subfiles;stripe_size=4100K" --kernel array1d --dist random --size 100K
run "random 0..100 KiB per rank, subfiles, verify=0: direct (model)" zero "layout=subfiles;verify=0" --kernel array1d --dist random --size 100K
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
