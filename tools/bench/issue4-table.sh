#!/usr/bin/env bash
# The benchmark table of the engine issue: every kernel of tagg-bench on 2 and
# 4 ranks, all variants side by side in one run each (alternating), median of
# --reps repetitions, with fsync, plus h5bench's CONTIG -> INTERLEAVED write
# (64K particles per rank, 4 ranks) on the MPI-IO driver and through the tagg
# VOL, alternating. Prints the tables; CSVs go to OUT.
#   tools/bench/issue4-table.sh BUILD OUT [REPS] [H5BENCH_WRITE]
set -euo pipefail
BUILD=${1:?build directory}; OUT=${2:?output directory}; REPS=${3:-5}; H5BW=${4:-}
mkdir -p "$OUT" "$OUT/files"
export HDF5_PLUGIN_PATH=$BUILD/plugins
for v in HDF5_VOL_CONNECTOR HDF5_DRIVER HDF5_DRIVER_CONFIG; do # inherited, they would redirect the MPI-IO baselines
  [ -z "${!v:-}" ] || echo "issue4-table: $v ignored (it would redirect the MPI-IO baselines)" >&2
  unset $v
done
bench() { # ranks name args...
  local np=$1 name=$2; shift 2
  echo "==> $name, $np ranks: tagg-bench $*"
  mpiexec -n "$np" "$BUILD/tools/tagg-bench" --reps "$REPS" --fsync --dir "$OUT/files" --csv "$OUT/$name-np$np.csv" "$@" \
    2> "$OUT/$name-np$np.err" | grep -v '^tagg-bench: rep'
}
for np in 2 4; do
  bench $np large-contig   --kernel array1d --dist uniform --size 32M
  bench $np random-1d      --kernel array1d --dist random --size 100K
  bench $np normal-1d      --kernel array1d --dist normal --size 100K
  bench $np hacc-aos       --kernel hacc --layout aos --particles 65536
  bench $np hacc-soa       --kernel hacc --layout soa --particles 65536
  bench $np hacc-pernode   --kernel hacc --layout soa --particles 65536 --files per-node
  bench $np s3d            --kernel s3d --grid 32 32 32
done
if [ -n "$H5BW" ]; then
  cfg=$OUT/h5bench-interleaved.cfg
  printf '%s\n' MEM_PATTERN=CONTIG FILE_PATTERN=INTERLEAVED TIMESTEPS=5 DELAYED_CLOSE_TIMESTEPS=0 \
    COLLECTIVE_DATA=YES COLLECTIVE_METADATA=YES "EMULATED_COMPUTE_TIME_PER_TIMESTEP=0 s" NUM_DIMS=1 \
    DIM_1=65536 DIM_2=1 DIM_3=1 CSV_FILE=$OUT/h5bench.csv > "$cfg"
  echo "==> h5bench write CONTIG -> INTERLEAVED, 64K particles/rank, 5 timesteps, 4 ranks (MB/s: raw, observed)"
  for i in $(seq "$REPS"); do
    for v in mpiio tagg; do
      if [ $v = tagg ]; then vol=(-genv HDF5_VOL_CONNECTOR "tagg under_vol=0;under_info={}"); else vol=(); fi
      out=$(mpiexec -n 4 "${vol[@]}" "$H5BW" "$cfg" "$OUT/files/h5bench-$v.h5" 2>&1)
      raw=$(sed -n 's/.*Raw write rate: \([0-9.]*\).*/\1/p' <<<"$out"); obs=$(sed -n 's/.*Observed write rate: \([0-9.]*\).*/\1/p' <<<"$out")
      echo "$v $i $raw $obs" | tee -a "$OUT/h5bench-rates.txt"
      rm -f "$OUT/files/h5bench-$v.h5"
    done
  done
  med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  for v in mpiio tagg; do
    raw=$(awk -v v=$v '$1==v {print $3}' "$OUT/h5bench-rates.txt" | med)
    obs=$(awk -v v=$v '$1==v {print $4}' "$OUT/h5bench-rates.txt" | med)
    echo "$v: median raw write rate $raw MB/s, observed $obs MB/s"
  done
fi
