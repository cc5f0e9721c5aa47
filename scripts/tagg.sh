#!/usr/bin/env bash
# The two commands of the README's quick start.
#   scripts/tagg.sh demo   set up what is missing, then run the demo: 4 MPI ranks
#                          write and read an HDF5 file through the tagg VOL connector
#   scripts/tagg.sh test   set up what is missing, then run the whole test suite
#   scripts/tagg.sh env    print the environment that puts tagg in an application's path:
#                          eval "$(scripts/tagg.sh env)" (only export lines on stdout)
set -Eeuo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TAGG_CACHE=${TAGG_CACHE:-$HOME/.cache/tagg}

cmd=${1:-}
case "$cmd" in
  demo|test|env) ;;
  *) echo "usage: scripts/tagg.sh demo|test|env" >&2; exit 2 ;;
esac

# The test suite also checks netCDF users: build netCDF-C for it.
if [ "$cmd" = test ]; then export TAGG_NETCDF=1; fi
if [ "$cmd" = env ]; then
  # only the export lines go to stdout (eval "$(scripts/tagg.sh env)"); set-up progress to stderr
  "$REPO/scripts/setup.sh" >&2
else
  "$REPO/scripts/setup.sh"
fi
# shellcheck source=/dev/null
. "$TAGG_CACHE/env.sh"
export LD_LIBRARY_PATH="$HDF5_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

case "$cmd" in
  env)
    echo "export HDF5_PLUGIN_PATH=$BUILD/plugins"
    echo "export HDF5_VOL_CONNECTOR='tagg under_vol=0;under_info={}'"
    echo "export LD_LIBRARY_PATH=$HDF5_ROOT/lib"
    ;;
  demo)
    out=${TMPDIR:-/tmp}/tagg-demo.h5
    echo "==> [demo] mpiexec -n 4 tagg-demo $out (an unmodified MPI-IO HDF5 program) through the tagg VOL connector"
    HDF5_PLUGIN_PATH="$BUILD/plugins" HDF5_VOL_CONNECTOR="tagg under_vol=0;under_info={}" TAGG_VERBOSE=1 \
      mpiexec -n 4 "$BUILD/tools/tagg-demo" "$out" 256 | tee "$BUILD/demo.out"
    grep -q '^tagg: file=tagg-demo.h5 .*raw_write_bytes=[1-9]' "$BUILD/demo.out" \
      || { echo "demo: tagg printed no summary with raw data: the data did not go through tagg" >&2; exit 1; }
    grep -q '^tagg: file=tagg-demo.h5 .*aggr_write_calls=[1-9]' "$BUILD/demo.out" \
      || { echo "demo: the interleaved write did not go through tagg's aggregators" >&2; exit 1; }
    "$HDF5_ROOT/bin/h5dump" -H "$out" | head -n 8
    echo "==> [demo] done: the lines starting with 'tagg:' are tagg's per-file summaries"
    ;;
  test)
    echo "==> [test] ctest in $BUILD (labels: unit, mpi, plugin, python)"
    ctest --test-dir "$BUILD" --output-on-failure --timeout 1200
    # The same suite built with AddressSanitizer and UBSan (not the Python
    # tests: the interpreter is not instrumented, so it cannot load ASan plugins;
    # not the oversubscribed 3-, 4- and 8-rank random-pattern runs, which take
    # many minutes under ASan and go through the same code as the 2-rank ones).
    echo "==> [test] AddressSanitizer + UBSan build"
    TAGG_SANITIZE=1 "$REPO/scripts/setup.sh"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$REPO/build-asan" --output-on-failure --timeout 1200 -LE python \
      -E 'mpi[.]patterns[.]r[348]_' 
    ;;
esac
