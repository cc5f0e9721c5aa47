#!/usr/bin/env bash
# Read and write bandwidth of layout=subfiles, with the stripe checksums
# checked on read (verify=1, the default) and not (verify=0), through
# tagg-bench (array1d kernel, one block per rank, collective). Prints
# tagg-bench's table of median bandwidths; no assertion (README: What tagg
# trusts and what it refuses).
#   tools/subfiles-bench.sh [BUILD] [NP] [SIZE] [REPS]
#     BUILD  a tagg build directory (default: build); NP ranks (2); SIZE per
#            rank (256M); REPS repetitions (5). DIR=/path sets where files go.
#   VERIFY_KEY=0 (for builds older than the key) runs the tagg-subfiles variant only.
set -eu
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$repo/build} np=${2:-2} size=${3:-256M} reps=${4:-5}
extra=()
[ "${VERIFY_KEY:-1}" = 1 ] && extra=(--extra-tagg "subfiles-verify0=layout=subfiles;subfiles=2;verify=0")
variants=tagg-subfiles
[ "${VERIFY_KEY:-1}" = 1 ] && variants=tagg-subfiles,subfiles-verify0
HDF5_PLUGIN_PATH="$build/plugins" mpiexec -n "$np" "$build/tools/tagg-bench" --kernel array1d --size "$size" \
  --reps "$reps" --dir "${DIR:-/tmp}" --variants "$variants" --tagg-config "subfiles=2" "${extra[@]}"
