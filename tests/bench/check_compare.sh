#!/usr/bin/env bash
# tools/bench/compare-drivers.sh at tiny sizes, 1 repetition, on a temporary
# directory: the structure of its table and CSVs, and that every case ran every
# variant and read back what it wrote. Performance is not asserted.
#   check_compare.sh WORKDIR
# Environment (from CTest): MPIEXEC BUILD SCRIPT REQUIRED (variants every case must verify)
set -u
work=$1
rm -rf "$work" && mkdir -p "$work/target" || exit 1
cd "$work" || exit 1
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

# Bad input: exit 2 with a message, nothing run.
bash "$SCRIPT" --build "$BUILD" --cases nope "$work/target" > bad1.txt 2>&1
rc=$?
[ $rc = 2 ] && grep -q "unknown case 'nope'" bad1.txt && ok "unknown case: exit 2 with message" \
  || { bad "unknown case: exit $rc"; cat bad1.txt; }
bash "$SCRIPT" --build "$BUILD" "$work/no-such-dir" > bad2.txt 2>&1
rc=$?
[ $rc = 2 ] && grep -q "not a writable directory" bad2.txt && ok "missing directory: exit 2 with message" \
  || { bad "missing directory: exit $rc"; cat bad2.txt; }

# The real run.
cases=$(bash "$SCRIPT" --list | awk '/^[a-z]/ {print $1}')
[ "$(echo "$cases" | wc -w)" -ge 10 ] && ok "--list: $(echo $cases)" || bad "--list: '$cases'"
MPIEXEC=$MPIEXEC timeout 900 bash "$SCRIPT" --build "$BUILD" --scale tiny --reps 1 --np 2 --label t \
  --out "$work/out" "$work/target" > run.txt 2>&1
rc=$?
sed -n '/== Summary/,$p' run.txt
[ $rc = 0 ] && ok "exit 0" || { bad "exit $rc"; tail -30 run.txt; }
out=$work/out
grep -Eq 'dd 4 MiB requests \((direct|buffered)\) before the kernels: write [0-9.]+ MiB/s' run.txt \
  && ok "dd limit measured before" || bad "no dd limit before the kernels"
grep -Eq 'dd 4 MiB requests \((direct|buffered)\) after the kernels: write [0-9.]+ MiB/s' run.txt \
  && ok "dd limit measured after" || bad "no dd limit after the kernels"
grep -Eq '^   reads: (drop|fadvise) ' "$out/summary.txt" && ok "summary names the read-cache method" \
  || bad "summary does not say how reads avoided the page cache"
head -1 "$out/summary.csv" | grep -qx 'label,case,ranks,variant,status,bytes,write_MiBs_median,write_min,write_max,write_x_best_mpiio,read_MiBs_median,read_min,read_max,read_x_best_mpiio,total_s_median,total_x_best_mpiio,write_pct_of_dd,read_cache,load_before,load_after' \
  && ok "summary.csv header" || bad "summary.csv header: $(head -1 "$out/summary.csv")"
awk -F, 'NR == 2' "$out/dd.csv" | grep -Eq '^t,before,(direct|buffered),[0-9.]+,[0-9.]+$' && ok "dd.csv" \
  || bad "dd.csv: $(cat "$out/dd.csv")"

for c in $cases; do
  vs=$REQUIRED
  [ "$c" = workflow ] && vs="mpiio-indep mpiio-coll tagg-shared tagg-subfiles tagg-nvr"
  [ -s "$out/$c.csv" ] || { bad "$c: no CSV"; continue; }
  grep -q "^$c " "$out/summary.txt" || bad "$c: no table in the summary"
  for v in $vs; do
    row=$(awk -F, -v c="$c" -v v="$v" '$2 == c && $4 == v' "$out/summary.csv")
    if [ -z "$row" ]; then bad "$c/$v: no summary row"; continue; fi
    # verified, positive bandwidths, a ratio, the same method for the reads
    echo "$row" | awk -F, '$5 == "ok" && $7 > 0 && $11 > 0 && $10 ~ /^[0-9.]+$/ && $14 ~ /^[0-9.]+$/ &&
                           $18 ~ /^(drop|fadvise)$/ && $19 ~ /^[0-9.]+ [0-9.]+ [0-9.]+$/ { ok = 1 } END { exit !ok }' \
      && ok "$c/$v: verified" || bad "$c/$v: $row"
    grep -q "^[^,]*,2,shared,$v,1,ok," "$out/$c.csv" || bad "$c/$v: no repetition row in $c.csv"
    awk -v v="$v" '$1 == v && / verified$/ { f = 1 } END { exit !f }' "$out/summary.txt" \
      || bad "$c/$v: not 'verified' in the printed table"
  done
  # the reference of the ratios is the better MPI-IO mode: one of them is 1.00
  awk -F, -v c="$c" '$2 == c && $4 ~ /^mpiio-/ && $10 == "1.00" { w = 1 } $2 == c && $4 ~ /^mpiio-/ && $14 == "1.00" { r = 1 }
                     END { exit !(w && r) }' "$out/summary.csv" \
    && ok "$c: ratios relative to the better MPI-IO mode" || bad "$c: no MPI-IO mode at 1.00"
done
left=$(ls -A "$work/target")
[ -z "$left" ] && ok "no files left in the target directory" || bad "files left: $left"

# --extra-tagg: one more tagg variant in every case run, in the table and the CSVs, verified;
# a malformed one is exit 2 before anything runs.
bash "$SCRIPT" --build "$BUILD" --extra-tagg nodio "$work/target" > bad3.txt 2>&1
rc=$?
[ $rc = 2 ] && grep -q "expected NAME=CONFIG" bad3.txt && ok "--extra-tagg without '=': exit 2 with message" \
  || { bad "--extra-tagg without '=': exit $rc"; cat bad3.txt; }
MPIEXEC=$MPIEXEC timeout 300 bash "$SCRIPT" --build "$BUILD" --scale tiny --reps 1 --np 2 --label x \
  --cases contig-256M --variants mpiio-coll,tagg-shared --extra-tagg tagg-nodio=direct_io=off \
  --out "$work/out-x" "$work/target" > runx.txt 2>&1
rc=$?
[ $rc = 0 ] && awk -F, '$2 == "contig-256M" && $4 == "tagg-nodio" && $5 == "ok" { f = 1 } END { exit !f }' \
  "$work/out-x/summary.csv" && grep -q "tagg-nodio" "$work/out-x/summary.txt" \
  && ok "--extra-tagg: tagg-nodio run, verified, in the summary" || { bad "--extra-tagg (exit $rc)"; tail -20 runx.txt; }

# The page-cache fallback: when drop_caches cannot be written, tagg-bench evicts
# the files instead and says why in the header and the CSV.
HDF5_PLUGIN_PATH=$BUILD/plugins timeout 300 "$MPIEXEC" -n 2 "$BUILD/tools/tagg-bench" --kernel array1d --size 8K \
  --reps 1 --variants mpiio-coll,tagg-shared --drop-caches-file "$work/no-such-dir/drop" --dir "$work/target" \
  --csv fb.csv > fb.txt 2>&1
rc=$?
[ $rc = 0 ] && grep -q "read cache: .*\[fadvise\] (fell back: writing $work/no-such-dir/drop: No such file" fb.txt \
  && awk -F, 'NR > 1 && $12 != "fadvise" { b = 1 } END { exit b }' fb.csv \
  && ok "drop not permitted: fell back to fadvise, said so" || { bad "fallback (exit $rc)"; cat fb.txt; }

echo "passed=$passed failed=$failed"
[ $failed = 0 ]
