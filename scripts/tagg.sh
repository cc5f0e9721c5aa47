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
    # The same binary twice, alternating: through the tagg VOL connector, and on
    # plain MPI-IO (no connector, whatever the caller's environment says), so
    # the times printed at the end compare tagg with what the program gets today.
    out=${TMPDIR:-/tmp}/tagg-demo.h5
    echo "==> [demo] mpiexec -n 4 tagg-demo $out (an unmodified MPI-IO HDF5 program) through the tagg VOL connector,"
    echo "           and the same binary on plain MPI-IO, alternating, 3 runs each"
    : > "$BUILD/demo.out"
    : > "$BUILD/demo-mpiio.out"
    for _ in 1 2 3; do
      env -u HDF5_VOL_CONNECTOR -u HDF5_DRIVER mpiexec -n 4 "$BUILD/tools/tagg-demo" "$out" 256 >> "$BUILD/demo-mpiio.out"
      HDF5_PLUGIN_PATH="$BUILD/plugins" HDF5_VOL_CONNECTOR="tagg under_vol=0;under_info={}" TAGG_VERBOSE=1 \
        mpiexec -n 4 "$BUILD/tools/tagg-demo" "$out" 256 >> "$BUILD/demo.out"
    done
    grep -v '^tagg-demo:' "$BUILD/demo.out" | head -n 2
    grep -q '^tagg: file=tagg-demo.h5 .*raw_write_bytes=[1-9]' "$BUILD/demo.out" \
      || { echo "demo: tagg printed no summary with raw data: the data did not go through tagg" >&2; exit 1; }
    grep -q '^tagg: file=tagg-demo.h5 .*aggr_write_calls=[1-9]' "$BUILD/demo.out" \
      || { echo "demo: the interleaved write did not go through tagg's aggregators" >&2; exit 1; }
    ! grep -q '^tagg:' "$BUILD/demo-mpiio.out" \
      || { echo "demo: the plain MPI-IO run went through tagg" >&2; exit 1; }
    # "tagg-demo: ... write W s, read R s, data verified" -> median of the runs
    med() { sed -n "s/^tagg-demo: .* write \([0-9.]*\) s, read \([0-9.]*\) s, data verified$/\\$1/p" "$2" \
              | sort -n | awk '{ v[NR] = $1 } END { if (NR == 3) print v[2]; else print "?" }'; }
    echo "==> [demo] tagg: write $(med 1 "$BUILD/demo.out") s read $(med 2 "$BUILD/demo.out") s" \
         "| MPI-IO: write $(med 1 "$BUILD/demo-mpiio.out") s read $(med 2 "$BUILD/demo-mpiio.out") s" \
         "(same binary, 4 ranks, $(sed -n 's/^tagg-demo: 4 ranks wrote and read \([0-9.]* MiB\).*/\1/p' "$BUILD/demo.out" | head -n 1), median of 3 each)"
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
