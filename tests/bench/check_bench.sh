#!/usr/bin/env bash
# Runs tagg-bench once at a tiny size and checks its table:
#   check_bench.sh NP WORKDIR [tagg-bench options...]   a kernel run
#   check_bench.sh NP WORKDIR --bad-option              bad options: exit 2 on all ranks, no hang
#   check_bench.sh NP WORKDIR --rotation                 --rotate: the order of the runs in each
#                                                        repetition and the CSV's position column
#   check_bench.sh NP WORKDIR --redirect-env             HDF5_VOL_CONNECTOR / HDF5_DRIVER in the
#                                                        environment do not reach the MPI-IO baselines
# Every run adds a tagg variant with a bad configuration (tagg-bad), which must show
# as unavailable while the others run. Checks: exit 0; one row per variant; every
# variant in REQUIRED verified ("ok"); other variants "ok" or "unavailable: ...";
# the CSV has a row per repetition; no file of the run is left in WORKDIR.
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR REQUIRED OPTIONAL
set -u
np=$1 work=$2
shift 2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
run() { HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG "$np" ${PREFLAGS:-} "$BENCH" "$@"; }

if [ "${1:-}" = --bad-option ]; then
  run --kernel nope > out.txt 2>&1
  rc=$?
  [ $rc = 2 ] && ok "unknown kernel: exit 2" || bad "unknown kernel: exit $rc"
  grep -q "unknown kernel 'nope'" out.txt && ok "unknown kernel: message" || bad "unknown kernel: no message"
  run --kernel hacc --extra-tagg noequals > out2.txt 2>&1
  rc=$?
  [ $rc = 2 ] && grep -q "expected NAME=CONFIG" out2.txt && ok "bad --extra-tagg: exit 2 with message" \
    || { bad "bad --extra-tagg: exit $rc"; cat out2.txt; }
elif [ "${1:-}" = --rotation ]; then
  # 3 variants x 4 repetitions: the order in which they ran (stderr, rank 0) must be the
  # list rotated by N per repetition, and the CSV's position must say the same
  vs=mpiio-indep,mpiio-coll,tagg-shared
  for rot in 0 1 2; do
    run --kernel array1d --size 4K --reps 4 --rotate $rot --variants $vs --dir "$work" --csv rot$rot.csv \
      > rot$rot.out 2> rot$rot.err
    rc=$?
    [ $rc = 0 ] || { bad "--rotate $rot: exit $rc"; tail -5 rot$rot.err; continue; }
    ran=$(sed -n 's/^tagg-bench: rep \([0-9]*\)\/4 \([^ ]*\) .*/\1 \2/p' rot$rot.err | tr '\n' ' ')
    want=$(for r in 0 1 2 3; do for j in 0 1 2; do
      echo "$((r + 1)) $(echo $vs | cut -d, -f$(( (j + r * rot) % 3 + 1 )))"; done; done | tr '\n' ' ')
    [ "$ran" = "$want" ] && ok "--rotate $rot: order $ran" || bad "--rotate $rot: ran '$ran', want '$want'"
    csvpos=$(awk -F, 'NR > 1 && $5 ~ /^[0-9]+$/ { print $5, $13, $4 }' rot$rot.csv | sort -n -k1 -k2 \
      | awk '{ printf "%s %s ", $1, $3 }')
    [ "$csvpos" = "$want" ] && ok "--rotate $rot: CSV positions" || bad "--rotate $rot: CSV says '$csvpos'"
    grep -q "rotate=$rot " rot$rot.out && ok "--rotate $rot: in the header" || bad "--rotate $rot: not in the header"
  done
  run --kernel array1d --rotate -1 > rotbad.txt 2>&1
  rc=$?
  [ $rc = 2 ] && grep -q -- "--rotate" rotbad.txt && ok "--rotate -1: exit 2 with message" \
    || { bad "--rotate -1: exit $rc"; cat rotbad.txt; }
elif [ "${1:-}" = --redirect-env ]; then
  # what `eval "$(scripts/tagg.sh env)"` leaves set would send every MPI-IO file
  # through tagg: tagg's summary (TAGG_VERBOSE=1) must name only tagg variants' files
  for var in "HDF5_VOL_CONNECTOR=tagg under_vol=0;under_info={}" "HDF5_DRIVER=tagg"; do
    name=${var%%=*}
    env "$var" TAGG_VERBOSE=1 HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG "$np" ${PREFLAGS:-} "$BENCH" \
      --kernel array1d --size 16K --reps 1 --variants mpiio-indep,mpiio-coll,tagg-shared --dir "$work" \
      > env.out 2> env.err
    rc=$?
    [ $rc = 0 ] && ok "$name set: exit 0" || { bad "$name set: exit $rc"; tail -5 env.err; }
    grep -q "^tagg: file=.*-mpiio-" env.out && bad "$name set: an MPI-IO variant's file went through tagg" \
      || ok "$name set: no MPI-IO variant's file through tagg"
    grep -q "^tagg: file=.*-tagg-shared" env.out && ok "$name set: tagg-shared through tagg" \
      || bad "$name set: no tagg summary for tagg-shared"
    grep -q "ignored from the environment: $name " env.out && ok "$name set: the header says it was ignored" \
      || bad "$name set: the header does not name it"
    for v in mpiio-indep mpiio-coll tagg-shared; do
      grep -Eq "^$v .* ok$" env.out || bad "$name set: $v not verified"
    done
  done
else
  run "$@" --reps 1 --dir "$work" --csv bench.csv --extra-tagg tagg-bad=layout=striped > out.txt 2> err.txt
  rc=$?
  cat out.txt
  [ $rc = 0 ] && ok "exit 0" || { bad "exit $rc"; tail -20 err.txt; }
  for v in $REQUIRED $OPTIONAL tagg-bad; do
    row=$(grep "^$v " out.txt)
    if [ -z "$row" ]; then
      bad "$v: no row in the table"
    elif [ "$v" = tagg-bad ]; then
      echo "$row" | grep -q "unavailable: .*striped" && ok "$v: unavailable, with the config error" \
        || bad "$v: not reported unavailable: $row"
    elif echo " $REQUIRED " | grep -q " $v "; then
      echo "$row" | grep -q " ok$" && ok "$v: verified" || bad "$v: not verified: $row"
    else
      echo "$row" | grep -Eq " ok$|unavailable: " && ok "$v: verified or unavailable" || bad "$v: $row"
    fi
  done
  n=$(grep -c "^[^,]*,$np,[^,]*,[^,]*,1,ok," bench.csv 2>/dev/null)
  [ "$n" -ge $(echo $REQUIRED | wc -w) ] && ok "CSV has a row per verified variant ($n)" || bad "CSV rows: $n"
  left=$(ls | grep '^tagg-bench-')
  [ -z "$left" ] && ok "no files left" || bad "files left: $left"
fi
echo "passed=$passed failed=$failed"
[ $failed = 0 ]
