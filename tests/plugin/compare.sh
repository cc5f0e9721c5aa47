#!/usr/bin/env bash
# Runs the workload on the plain MPI-IO driver and through tagg, then checks:
# the program's own read-back, h5diff, byte identity, and tagg's per-file
# summary (so a silent bypass of tagg fails).
#   compare.sh vfd|vol NP WORKLOAD WORKDIR
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS H5DIFF PLUGIN_DIR
set -u
path=$1 np=$2 prog=$3 work=$4
mkdir -p "$work" && cd "$work" || exit 1
passed=0 failed=0
ok()   { echo "PASS: $*"; passed=$((passed + 1)); }
bad()  { echo "FAIL: $*"; failed=$((failed + 1)); }
run()  { timeout 300 "$MPIEXEC" $NPFLAG "$np" ${PREFLAGS:-} "$@"; }

for md in coll indep; do
  rm -f ref.h5 tagg.h5
  (unset HDF5_DRIVER HDF5_VOL_CONNECTOR HDF5_PLUGIN_PATH; run "$prog" ref.h5 mpio "$md") > ref.out 2>&1 \
    && ok "$md: reference run on the MPI-IO driver" || { bad "$md: reference run"; cat ref.out; continue; }
  if [ "$path" = vfd ]; then
    HDF5_PLUGIN_PATH=$PLUGIN_DIR HDF5_DRIVER=tagg TAGG_VERBOSE=1 run "$prog" tagg.h5 default "$md" > tagg.out 2>&1
  else
    HDF5_PLUGIN_PATH=$PLUGIN_DIR HDF5_VOL_CONNECTOR="tagg under_vol=0;under_info={}" TAGG_VERBOSE=1 \
      run "$prog" tagg.h5 mpio "$md" > tagg.out 2>&1
  fi
  rc=$?
  [ $rc = 0 ] && grep -q "failures=0" tagg.out && ok "$md: workload through tagg ($path) reads back every element" \
    || { bad "$md: workload through tagg ($path), exit $rc"; tail -40 tagg.out; }
  "$H5DIFF" ref.h5 tagg.h5 > diff.out 2>&1 && ok "$md: h5diff finds no difference" || { bad "$md: h5diff"; head -20 diff.out; }
  cmp -s ref.h5 tagg.h5 && ok "$md: file is byte-identical to the MPI-IO driver's" || bad "$md: files differ byte-wise"

  # Evidence that tagg carried the data: two summary lines (write phase, read phase).
  want=$(sed -n 's/.*raw_bytes_written=\([0-9]*\).*/\1/p' ref.out)
  wline=$(grep '^tagg: file=tagg.h5 ' tagg.out | sed -n 1p)
  rline=$(grep '^tagg: file=tagg.h5 ' tagg.out | sed -n 2p)
  field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
  wb=$(field "$wline" raw_write_bytes); cw=$(field "$wline" coll_write_calls); rb=$(field "$rline" raw_read_bytes)
  if [ -n "$wline" ] && [ -n "$want" ] && [ "${wb:-0}" -ge "$want" ] && [ "${cw:-0}" -gt 0 ] && [ "${rb:-0}" -ge "$want" ]; then
    ok "$md: tagg summary shows the raw data (written $wb >= $want bytes, $cw collective writes, read $rb bytes)"
  else
    bad "$md: tagg summary missing or short (want >= $want raw bytes): '$wline' / '$rline'"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
