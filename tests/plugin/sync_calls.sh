#!/usr/bin/env bash
# Pins tagg's fixed costs: the synchronising MPI calls tagg itself makes per
# HDF5 call (libtagg-mpicount attributes each to the HDF5 call it happened in
# and to the library that made it), for sync_calls.c run through the VOL
# connector. Fails when an HDF5 call costs more tagg calls than its limit, when
# a phase is missing, or when the data or the aggregation is not what it must be.
#   sync_calls.sh NP EXE MPICOUNT_LIB WORKDIR PHASE=MAX...   (MAX: tagg's calls per occurrence)
# SYNC_MODE=direct: the program's contiguous blocks (direct by the cost model,
# accessed before the plan once their shape is known) instead of aggregated
# column blocks.
set -u
np=$1 exe=$2 lib=$3 work=$4
shift 4
rm -rf "$work" && mkdir -p "$work" || exit 1
preload=$lib
[ -n "${ASAN_LIB:-}" ] && preload="$ASAN_LIB:$lib"
mode=${SYNC_MODE:-} vol="tagg under_vol=0;under_info={};aggregate=always"
[ "$mode" = direct ] && vol="tagg under_vol=0;under_info={}"
out=$(HDF5_PLUGIN_PATH="$PLUGIN_DIR" HDF5_VOL_CONNECTOR="$vol" \
      TAGG_VERBOSE=1 MPICOUNT_OUT= "$MPIEXEC" $NPFLAG "$np" $PREFLAGS -genv LD_PRELOAD "$preload" "$exe" "$work" $mode 2>&1)
rc=$?
echo "$out" | grep -E '^(mpicount-phase|sync_calls|tagg: file)'
fail=0
[ $rc = 0 ] && echo "$out" | grep -q '^sync_calls: .*data verified' || { echo "FAIL: the program failed (exit $rc)"; echo "$out" | tail -20; exit 1; }
if [ "$mode" = direct ]; then
  # the second file: three direct writes, each accessed before its plan (the
  # first file's write taught the shape); the read-only file: the second read
  echo "$out" | grep -Eq '^tagg: file=sync_calls.h5 .*raw_write_bytes=[1-9].*aggr_write_calls=0 .*speculated=3 ' \
    || { echo "FAIL: the second file's three writes did not all end at the describe gather"; fail=1; }
  echo "$out" | grep -Eq '^tagg: file=sync_calls.h5 .*raw_read_bytes=[1-9].*aggr_read_calls=0 .*speculated=1 ' \
    || { echo "FAIL: the second read did not end at the describe gather"; fail=1; }
else
  # the second file: three aggregated writes, the later two on the first one's plan
  echo "$out" | grep -Eq '^tagg: file=sync_calls.h5 .*aggr_write_calls=3 .*plans_reused=2' \
    || { echo "FAIL: the second file's writes were not aggregated three times with two plans reused"; fail=1; }
fi
for lim in "$@"; do
  phase=${lim%=*} max=${lim##*=}
  line=$(echo "$out" | grep -F "mpicount-phase $phase n=")
  if [ -z "$line" ]; then echo "FAIL: no $phase in mpicount's report"; fail=1; continue; fi
  n=$(echo "$line" | sed -n 's/.* n=\([0-9]*\) .*/\1/p')
  t=$(echo "$line" | sed -n 's/.* tagg=\([0-9]*\) .*/\1/p')
  if awk -v t="$t" -v n="$n" -v m="$max" 'BEGIN { exit !(n > 0 && t / n <= m) }'; then
    echo "ok: $phase: $t tagg calls in $n calls (at most $max each)"
  else
    echo "FAIL: $phase: $t synchronising calls by tagg in $n calls, more than $max each"; fail=1
  fi
done
exit $fail
