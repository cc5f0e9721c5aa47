#!/usr/bin/env bash
# compare-drivers.sh: tagg against the MPI-IO its users have, on one directory.
#
# Runs every tagg-bench kernel case with all its variants side by side (MPI-IO
# independent, MPI-IO collective, HDF5 subfiling, tagg shared, tagg subfiles;
# variants alternate within each repetition), always with --fsync and with reads
# kept away from the page cache (--read-cache, default drop), and measures in the
# same run the directory's large-request limit: dd of 4 MiB O_DIRECT requests
# (write, then read after dropping the caches), once before and once after the
# kernels. Prints one table per case and a summary: median MiB/s with min..max,
# the ratio to the BETTER MPI-IO mode (by median, write and read separately) and
# write bandwidth as % of dd's. Writes CSVs (per case, and summary.csv).
#
#   tools/bench/compare-drivers.sh [options] DIR
#     --build DIR        build directory with tools/tagg-bench and plugins/ (default: REPO/build)
#     --out DIR          where tables, CSVs and logs go (default ./compare-LABEL)
#     --label NAME       names the run in the CSVs (default: basename of DIR)
#     --np N             MPI ranks (default 2; timings want one rank per core)
#     --reps N           repetitions per variant (default 5)
#     --scale full|tiny  full: the cases below at their real sizes (default); tiny: the same
#                        cases at a few KiB, for tests
#     --cases a,b,...    only these cases (default all; --list shows them)
#     --read-cache M     drop|fadvise|none, passed to tagg-bench (default drop)
#     --variants a,b,... only these tagg-bench variants (default all; the workflow's tagg-nvr always runs)
#     --extra-tagg NAME=CFG  one more tagg variant in every case (repeatable), e.g.
#                        tagg-nodio=direct_io=off: an A/B of one setting in the same run
#     --h5bench PATH     also run h5bench itself (h5bench_write built by hand, see
#                        h5bench-configs/README.md) on plain MPI-IO and through the tagg VOL; the
#                        h5b-* cases run its write patterns in tagg-bench on every variant
#     --calibrate        first run tagg-calibrate on DIR (its write and read cost by request
#                        size) and give the tier file to tagg-shared and tagg-subfiles
#                        (tiers=OUT/target.tiers): the model then decides on measured figures
#     --list             print the cases and exit
#     --summary OUT      print the summary of an earlier run again, from OUT
#   Environment: MPIEXEC (default mpiexec); BIND, its options that bind the ranks to
#   cores (default -bind-to core, MPICH's launcher; BIND= leaves them unbound).
# Exit status: 0 when every available variant of every case read back what it
# wrote; 1 when one failed or a case did not run; 2 on bad options.
#
# Typical targets: a GlusterFS mount (a real distributed file system, see the
# README), a local-disk directory (write times include fsync), /dev/shm (tmpfs:
# the pure software overhead, no storage).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$REPO/build OUT= LABEL= NP=2 REPS=5 SCALE=full CASES=all CACHE=drop H5BW= LIST=0 DIR= VARIANTS= CALIBRATE=0
EXTRA=()
die() { echo "compare-drivers: $*" >&2; exit 2; }
# The summary table of a run directory (summary.csv, dd.csv, run.env), also
# printed again by --summary OUT. Bandwidths with 3 significant digits.
print_summary() { # out
  local out=$1 LABEL DIR NP REPS CACHE SCALE
  # shellcheck source=/dev/null
  . "$out/run.env" || return 1
  echo ""
  echo "== Summary: $LABEL ($DIR), $NP ranks, median of $REPS (min..max) MiB/s, --fsync"
  echo "   reads: $(awk -F, 'NR > 1 && $18 != "" && $18 != "-" {print $18; exit}' "$out/summary.csv") (tagg-bench --read-cache $CACHE; the method actually used)"
  awk -F, 'NR > 1 { printf "   dd 4 MiB requests (%s) %s the kernels: write %s MiB/s, read %s MiB/s\n", $3, $2, $4, $5 }' "$out/dd.csv"
  echo "   x = median / the better MPI-IO mode's median; %dd = write / dd write before the kernels"
  echo "   total x = the better MPI-IO mode's median write+read time / this variant's (> 1: faster)"
  awk -F, 'function f(x) { return x >= 100 ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : x >= 1 ? sprintf("%.2f", x) : sprintf("%.3f", x) }
    NR > 1 {
      if ($2 != last) { printf "\n%s (load %s -> %s)\n%-18s %24s %6s %24s %6s %5s %7s  %s\n", $2, $19, $20,
                        "variant", "write MiB/s (min..max)", "x", "read MiB/s (min..max)", "x", "%dd", "total x", "status"; last = $2 }
      if ($7 == "") { printf "%-18s %s\n", $4, $5; next }
      w = f($7) " (" f($8) ".." f($9) ")"; r = $11 == "" ? "-" : f($11) " (" f($12) ".." f($13) ")"
      printf "%-18s %24s %6s %24s %6s %5s %7s  %s\n", $4, w, $10, r, ($14 == "" ? "-" : $14), ($17 == "" ? "-" : $17),
             ($16 == "" ? "-" : $16), ($5 == "ok" ? "verified" : $5) }' "$out/summary.csv"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --label) LABEL=${2:?}; shift 2 ;;
    --np) NP=${2:?}; shift 2 ;;
    --reps) REPS=${2:?}; shift 2 ;;
    --scale) SCALE=${2:?}; shift 2 ;;
    --cases) CASES=${2:?}; shift 2 ;;
    --read-cache) CACHE=${2:?}; shift 2 ;;
    --h5bench) H5BW=${2:?}; shift 2 ;;
    --variants) VARIANTS=${2:?}; shift 2 ;;
    --extra-tagg) [[ ${2:-} == ?*=* ]] || die "--extra-tagg: expected NAME=CONFIG, got '${2:-}'"; EXTRA+=("$2"); shift 2 ;;
    --calibrate) CALIBRATE=1; shift ;;
    --list) LIST=1; shift ;;
    --summary) print_summary "${2:?}"; exit $? ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$DIR" ] || die "one directory only ('$DIR' and '$1')"; DIR=$1; shift ;;
  esac
done
[[ $NP =~ ^[1-9][0-9]*$ ]] || die "--np: '$NP' is not a positive number"
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps: '$REPS' is not a positive number"
[[ $SCALE = full || $SCALE = tiny ]] || die "--scale: '$SCALE' (valid: full, tiny)"

MiB=1048576
# Each case: name, what it is, tagg-bench arguments at full scale and at tiny
# scale. Sizes at full scale are per rank, computed so that the total per
# repetition does not depend on --np.
big=$((256 * MiB))
case_list() {
  local hacc_n=$(( (big + 38 * NP - 1) / (38 * NP) )) s3d_nz=$(( (big + 88 * 64 * 64 * NP - 1) / (88 * 64 * 64 * NP) ))
  cat <<EOF
contig-256M|large contiguous blocks, 256 MiB in all|--kernel array1d --dist uniform --size $(( big / NP ))|--kernel array1d --dist uniform --size 64K
columns-256M|column blocks, 256 MiB in all (16384 columns: one 128/ranks KiB piece per row and rank)|--kernel columns --cols 16384 --rows $(( 2048 / NP ))|--kernel columns --cols 1024 --rows 8
columns-demo|the demo: 8 MiB in all, 1024 columns (one 8/ranks KiB piece per row and rank)|--kernel columns --cols 1024 --rows $(( 1024 / NP ))|--kernel columns --cols 64 --rows 4
random-1d|MA-TAPIOCA 1D array, random 0-100 KB per rank|--kernel array1d --dist random --size 100K|--kernel array1d --dist random --size 20K
normal-1d|MA-TAPIOCA 1D array, normal sizes (mean 50 KB)|--kernel array1d --dist normal --size 100K|--kernel array1d --dist normal --mean 10K --sd 3K
hacc-aos|HACC-IO array of structures, 64K particles per rank|--kernel hacc --layout aos --particles 65536|--kernel hacc --layout aos --particles 500
hacc-soa-256M|HACC-IO nine datasets, 256 MiB in all|--kernel hacc --layout soa --particles $hacc_n|--kernel hacc --layout soa --particles 500
s3d|S3D-IO 32x32x32 points x 11 vars per rank|--kernel s3d --grid 32 32 32|--kernel s3d --grid 6 5 4
s3d-256M|S3D-IO 64x64xNZ points x 11 vars per rank, 256 MiB in all|--kernel s3d --grid 64 64 $s3d_nz|--kernel s3d --grid 4 4 3
h5b-contig-256M|h5bench VPIC-IO CONTIG->CONTIG (8 datasets per timestep), 4 timesteps, 256 MiB in all|--kernel vpic --layout soa --timesteps 4 --particles $(( big / 32 / 4 / NP ))|--kernel vpic --layout soa --timesteps 2 --particles 500
h5b-interleaved|h5bench VPIC-IO CONTIG->INTERLEAVED (one compound, member by member), 64K particles per rank, 5 timesteps|--kernel vpic --layout aos --timesteps 5 --particles 65536|--kernel vpic --layout aos --timesteps 2 --particles 500
workflow|seed 002 Table 8: HACC-IO SoA 1M particles per rank written then read back, node-local subfiles (tagg-nvr); total = write + read|--kernel hacc --layout soa --particles 1M --variants mpiio-indep,mpiio-coll,tagg-shared,tagg-subfiles --extra-tagg tagg-nvr=layout=subfiles;destination=nvr;nvr_dir=@NVR@|--kernel hacc --layout soa --particles 700 --variants mpiio-indep,mpiio-coll,tagg-shared,tagg-subfiles --extra-tagg tagg-nvr=layout=subfiles;destination=nvr;nvr_dir=@NVR@
EOF
}
if [ "$LIST" = 1 ]; then
  case_list | awk -F'|' '{printf "%-14s %s\n  tagg-bench %s\n", $1, $2, $3}'
  exit 0
fi
[ -n "$DIR" ] || die "name the directory to measure (see --help)"
[ -d "$DIR" ] && [ -w "$DIR" ] || die "'$DIR' is not a writable directory"
DIR=$(cd "$DIR" && pwd)
BENCH=$BUILD/tools/tagg-bench
[ -x "$BENCH" ] || die "no $BENCH: build first (cmake --build BUILD)"
[ -d "$BUILD/plugins" ] || die "no $BUILD/plugins"
[ -z "$H5BW" ] || [ -x "$H5BW" ] || die "--h5bench: '$H5BW' is not an executable"
LABEL=${LABEL:-$(basename "$DIR")}
OUT=${OUT:-$PWD/compare-$LABEL}
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
export HDF5_PLUGIN_PATH=$BUILD/plugins
# HDF5 reads these at start-up: inherited (eval "$(scripts/tagg.sh env)"), they
# would send the MPI-IO baselines through tagg. Each variant names its own driver.
for v in HDF5_VOL_CONNECTOR HDF5_DRIVER HDF5_DRIVER_CONFIG; do
  [ -z "${!v:-}" ] || echo "$(basename "$0"): $v ignored (it would redirect the MPI-IO baselines)" >&2
  unset $v
done
MPIEXEC=${MPIEXEC:-mpiexec}
# ranks bound to cores (README: Benchmarks, "Bind the ranks to cores"); BIND= runs them unbound
BIND=${BIND--bind-to core}
if [ "$CASES" != all ]; then
  for c in ${CASES//,/ }; do case_list | grep -q "^$c|" || die "--cases: unknown case '$c' (see --list)"; done
fi
load() { cut -d' ' -f1-3 /proc/loadavg; }

log=$OUT/run.log
: > "$log"
say() { echo "$*" | tee -a "$log"; }

# ------------------------------------------------------------------ calibration (--calibrate)
TIERS=
if [ "$CALIBRATE" = 1 ]; then
  say "compare-drivers: tagg-calibrate on $DIR (its tier file goes to tagg-shared and tagg-subfiles)"
  if "$MPIEXEC" $BIND -n "$NP" "$BUILD/tools/tagg-calibrate/tagg-calibrate" --quick --target-dir "$DIR" -o "$OUT/target.tiers" \
       > "$OUT/calibrate.log" 2>&1; then
    TIERS=$OUT/target.tiers
    grep request "$TIERS" | sed 's/^/    /' | tee -a "$log"
  else
    say "compare-drivers: tagg-calibrate failed (see $OUT/calibrate.log)"; exit 1
  fi
fi

# ------------------------------------------------------------------ dd: the large-request limit
# 4 MiB requests with O_DIRECT (no page cache on either side); write with
# conv=fsync, read after a cache drop. Falls back to buffered I/O + fsync, and
# says so, where O_DIRECT is not supported (tmpfs).
dd_mibs() { # dd's last line -> MiB/s
  awk '/copied/ { v = $(NF-1); u = $NF; f = u ~ /^GB/ ? 1e9 : u ~ /^MB/ ? 1e6 : u ~ /^kB/ ? 1e3 : u ~ /^B/ ? 1 : 0;
                  if (f) printf "%.1f", v * f / 1048576 }'
}
dd_limit() { # tag -> "write_MiBs read_MiBs mode"
  local f=$DIR/compare-dd.$$ count=$([ "$SCALE" = full ] && echo 64 || echo 4) w r mode=direct out
  if ! out=$(dd if=/dev/zero of="$f" bs=4M count="$count" oflag=direct conv=fsync 2>&1); then
    mode=buffered
    out=$(dd if=/dev/zero of="$f" bs=4M count="$count" conv=fsync 2>&1) || { rm -f "$f"; echo "- - failed"; return; }
  fi
  w=$(dd_mibs <<<"$out")
  sync; [ "$CACHE" = drop ] && { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null
  if [ $mode = direct ]; then out=$(dd if="$f" of=/dev/null bs=4M iflag=direct 2>&1); else out=$(dd if="$f" of=/dev/null bs=4M 2>&1); fi
  r=$(dd_mibs <<<"$out")
  rm -f "$f"
  echo "${w:--} ${r:--} $mode"
}

# ------------------------------------------------------------------ the kernels
summary=$OUT/summary.csv
printf 'LABEL=%q\nDIR=%q\nNP=%q\nREPS=%q\nCACHE=%q\nSCALE=%q\nBIND=%q\n' "$LABEL" "$DIR" "$NP" "$REPS" "$CACHE" "$SCALE" "$BIND" > "$OUT/run.env"
echo "label,case,ranks,variant,status,bytes,write_MiBs_median,write_min,write_max,write_x_best_mpiio,read_MiBs_median,read_min,read_max,read_x_best_mpiio,total_s_median,total_x_best_mpiio,write_pct_of_dd,read_cache,load_before,load_after" > "$summary"
nvr=$(mktemp -d "${TMPDIR:-/tmp}/compare-nvr.XXXXXX")
trap 'rm -rf "$nvr" "$DIR"/compare-dd.$$ "$DIR"/compare-h5bench-$$*' EXIT
say "compare-drivers: dir=$DIR label=$LABEL ranks=$NP reps=$REPS scale=$SCALE read-cache=$CACHE build=$BUILD"
say "compare-drivers: $(uname -n), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average $(load)"
say "compare-drivers: file system of $DIR: $(df -PT "$DIR" | awk 'NR == 2 {print $1, $2}')"
read -r ddw0 ddr0 ddm0 < <(dd_limit)
say "compare-drivers: dd 4 MiB requests ($ddm0) before the kernels: write $ddw0 MiB/s, read $ddr0 MiB/s"

failed=0
# Reads one case's CSV and appends its rows to the summary, adding the ratios to
# the better MPI-IO mode, the total workflow time and the % of dd.
summarise() { # case csv dd_write load_before load_after
  awk -F, -v OFS=, -v label="$LABEL" -v cs="$1" -v dd="$3" -v lb="$4" -v la="$5" '
    NR == 1 { next }
    $5 ~ /^[0-9]+$/ && $6 == "ok" { tot[$4] = tot[$4] " " ($8 + $10) }
    !($4 in seen) { seen[$4] = 1; order[++n] = $4 }
    { by[$4] = $7; rc = $12; ranks = $2 }
    $5 == "median" { st[$4] = $6; wm[$4] = $9; rm[$4] = $11 }
    $5 == "min" { wl[$4] = $9; rl[$4] = $11 }
    $5 == "max" { wh[$4] = $9; rh[$4] = $11 }
    $5 == "-" { why[$4] = $6 }
    function median(s,   a, k, i, j, t) {
      k = split(s, a, " "); if (!k) return ""
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
    END {
      for (i = 1; i <= n; i++) { v = order[i]; if (!(v in wm)) continue; tm[v] = median(tot[v])
        if (v ~ /^mpiio-/ && st[v] == "ok") { if (wm[v] > bw) bw = wm[v]; if (rm[v] > br) br = rm[v]
                                               if (tm[v] != "" && (bt == "" || tm[v] < bt)) bt = tm[v] } }
      for (i = 1; i <= n; i++) { v = order[i]
        if (!(v in wm)) { print label, cs, ranks, v, why[v], by[v], "", "", "", "", "", "", "", "", "", "", "", rc, lb, la; continue }
        if (v in why) st[v] = why[v]
        wx = bw > 0 ? sprintf("%.2f", wm[v] / bw) : ""; rx = br > 0 ? sprintf("%.2f", rm[v] / br) : ""
        tx = bt > 0 && tm[v] > 0 ? sprintf("%.2f", bt / tm[v]) : ""
        pd = dd > 0 ? sprintf("%.0f", 100 * wm[v] / dd) : ""
        print label, cs, ranks, v, st[v], by[v], wm[v], wl[v], wh[v], wx, rm[v], rl[v], rh[v], rx,
              (tm[v] == "" ? "" : sprintf("%.4f", tm[v])), tx, pd, rc, lb, la } }' "$2" >> "$summary"
}

while IFS='|' read -r name what full tiny; do
  [ "$CASES" = all ] || [[ ",$CASES," == *",$name,"* ]] || continue
  args=$([ "$SCALE" = full ] && echo "$full" || echo "$tiny")
  args=${args//@NVR@/$nvr/$name}
  # shellcheck disable=SC2206
  argv=($args)
  [ -z "$VARIANTS" ] || argv+=(--variants "$VARIANTS")
  for x in "${EXTRA[@]}"; do argv+=(--extra-tagg "$x"); done
  [ -z "$TIERS" ] || argv+=(--tagg-config "layout=shared;tiers=$TIERS")
  lb=$(load)
  say ""
  say "==> $name: $what"
  say "    load average before: $lb"
  say "    $MPIEXEC $BIND -n $NP tagg-bench ${argv[*]} --reps $REPS --fsync --read-cache $CACHE --dir $DIR"
  "$MPIEXEC" $BIND -n "$NP" "$BENCH" "${argv[@]}" --reps "$REPS" --fsync --read-cache "$CACHE" --dir "$DIR" \
    --csv "$OUT/$name.csv" < /dev/null > "$OUT/$name.txt" 2> "$OUT/$name.err"
  rc=$?
  la=$(load)
  tee -a "$log" < "$OUT/$name.txt"
  say "    load average after: $la; tagg-bench exit $rc"
  if [ $rc != 0 ] || [ ! -s "$OUT/$name.csv" ]; then
    failed=1
    say "    FAILED (exit $rc): $(tail -3 "$OUT/$name.err" | tr '\n' ' ')"
    [ -s "$OUT/$name.csv" ] || continue
  fi
  summarise "$name" "$OUT/$name.csv" "$ddw0" "$lb" "$la"
done < <(case_list)

# ------------------------------------------------------------------ h5bench (optional)
if [ -n "$H5BW" ]; then
  # VPIC-IO particles: 8 x 4 bytes. CONTIG -> CONTIG: eight 1D datasets per
  # timestep, 256 MiB in all; CONTIG -> INTERLEAVED: one compound dataset, each
  # member written separately (64K particles per rank, as h5bench's small case).
  if [ "$SCALE" = full ]; then contig_n=$(( big / 32 / 4 / NP )) inter_n=65536 steps_c=4 steps_i=5
  else contig_n=1024 inter_n=1024 steps_c=2 steps_i=2; fi
  # h5bench prints "<value> <K|M|G>B/s" in binary units: -> MiB/s
  h5b_rate() { awk -v key="$1" 'index($0, key ":") { split(substr($0, index($0, key ":") + length(key) + 1), a, " ")
    u = substr(a[2], 1, 1); f = u == "K" ? 1 / 1024 : u == "M" ? 1 : u == "G" ? 1024 : u == "T" ? 1048576 : 1 / 1048576
    printf "%.3f", a[1] * f; exit }'; }
  h5rates=$OUT/h5bench.txt
  : > "$h5rates"
  for pat in CONTIG INTERLEAVED; do
    if [ $pat = CONTIG ]; then n=$contig_n steps=$steps_c; else n=$inter_n steps=$steps_i; fi
    cfg=$OUT/h5bench-$pat.cfg
    printf '%s\n' MEM_PATTERN=CONTIG FILE_PATTERN=$pat TIMESTEPS=$steps DELAYED_CLOSE_TIMESTEPS=0 \
      COLLECTIVE_DATA=YES COLLECTIVE_METADATA=YES "EMULATED_COMPUTE_TIME_PER_TIMESTEP=0 s" NUM_DIMS=1 \
      DIM_1=$n DIM_2=1 DIM_3=1 CSV_FILE=$OUT/h5bench-$pat.csv > "$cfg"
    lb=$(load)
    say ""
    say "==> h5bench-$pat: h5bench_write CONTIG -> $pat, $n particles per rank, $steps timesteps, $NP ranks"
    say "    load average before: $lb"
    for i in $(seq "$REPS"); do
      for v in mpiio tagg; do
        f=$DIR/compare-h5bench-$$-$v.h5
        if [ $v = tagg ]; then vol=(-genv HDF5_VOL_CONNECTOR "tagg under_vol=0;under_info={}"); else vol=(); fi
        o=$("$MPIEXEC" $BIND -n "$NP" "${vol[@]}" "$H5BW" "$cfg" "$f" 2>&1 < /dev/null)
        rc=$?
        raw=$(h5b_rate "Raw write rate" <<<"$o") obs=$(h5b_rate "Observed write rate" <<<"$o")
        if [ $rc != 0 ] || [ -z "$raw" ]; then
          failed=1; say "    h5bench $v rep $i FAILED (exit $rc): $(tail -3 <<<"$o" | tr '\n' ' ')"
        else
          echo "$pat $v $i $raw $obs" >> "$h5rates"   # MiB/s: raw (inside H5Dwrite), observed (whole run)
        fi
        rm -f "$f"
      done
    done
    la=$(load)
    say "    load average after: $la"
    by=$(( n * 32 * steps * NP ))
    awk -v pat=$pat -v label="$LABEL" -v np="$NP" -v by=$by -v lb="$lb" -v la="$la" -v dd="$ddw0" -v rc="$CACHE" '
      function med(s, a, k, i, j, t) { k = split(s, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
      function mn(s, a, k, i, m) { k = split(s, a, " "); m = a[1]; for (i = 2; i <= k; i++) if (a[i] < m) m = a[i]; return m }
      function mx(s, a, k, i, m) { k = split(s, a, " "); m = a[1]; for (i = 2; i <= k; i++) if (a[i] > m) m = a[i]; return m }
      $1 == pat { raw[$2] = raw[$2] " " $4 }
      END { ref = med(raw["mpiio"])
        for (v in raw) { m = med(raw[v]); printf "%s,h5bench-%s,%s,h5bench-%s,not-checked,%d,%.1f,%.1f,%.1f,%.2f,,,,,,,%s,-,%s,%s\n",
          label, tolower(pat), np, v, by, m, mn(raw[v]), mx(raw[v]), (ref > 0 ? m / ref : 0),
          (dd > 0 ? sprintf("%.0f", 100 * m / dd) : ""), lb, la } }' "$h5rates" >> "$summary"
  done
fi

read -r ddw1 ddr1 ddm1 < <(dd_limit)
say ""
say "compare-drivers: dd 4 MiB requests ($ddm1) after the kernels: write $ddw1 MiB/s, read $ddr1 MiB/s"

printf 'label,when,mode,write_MiBs,read_MiBs\n%s,before,%s,%s,%s\n%s,after,%s,%s,%s\n' "$LABEL" "$ddm0" "$ddw0" "$ddr0" \
  "$LABEL" "$ddm1" "$ddw1" "$ddr1" > "$OUT/dd.csv"
print_summary "$OUT" | tee -a "$log" "$OUT/summary.txt"
say ""
say "compare-drivers: CSVs and logs in $OUT (summary.csv, <case>.csv, <case>.err, dd.csv, run.log)"
exit $failed
