#!/usr/bin/env bash
# `eval "$(scripts/tagg.sh env)"` (README) when the set-up still has work to
# do: a fresh TAGG_CACHE (no env.sh, no logs; HDF5 and the venv of the real
# cache reused so the run stays cheap), so every set-up step runs and prints
# its progress, and the build step runs cmake --build. stdout must hold only
# export lines, the progress must be on stderr, and the eval must work.
#   tagg_env.sh REPO HDF5_ROOT VENV BUILD WORKDIR
set -u
repo=$1 hdf5=$2 venv=$3 build=$4 work=$5
rm -rf "$work" && mkdir -p "$work/cache" || exit 1
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
ln -s "$venv" "$work/cache/$(basename "$venv")"
TAGG_CACHE=$work/cache HDF5_ROOT=$hdf5 TAGG_BUILD_DIR=$build timeout 600 "$repo/scripts/tagg.sh" env > "$work/out" 2> "$work/err"
rc=$?
[ $rc = 0 ] && ok "tagg.sh env with set-up work to do: exit 0" || { bad "exit $rc"; tail -20 "$work/err"; }
[ -s "$work/out" ] && ! grep -qv '^export ' "$work/out" && ok "stdout holds only export lines ($(wc -l < "$work/out"))" \
  || { bad "stdout: $(cat "$work/out")"; }
grep -q '^==> \[build\]' "$work/err" && grep -q '^==> set-up complete' "$work/err" && ok "the set-up's progress went to stderr" \
  || bad "stderr: $(head -5 "$work/err")"
[ -f "$work/cache/env.sh" ] && ok "the set-up wrote its env.sh in the fresh cache" || bad "no env.sh written"
got=$(env -i PATH="$PATH" HOME="$HOME" bash -c 'eval "$(cat "$1")" && echo "$HDF5_PLUGIN_PATH|$HDF5_VOL_CONNECTOR"' _ "$work/out")
[ "$got" = "$build/plugins|tagg under_vol=0;under_info={}" ] && ok "eval sets HDF5_PLUGIN_PATH and HDF5_VOL_CONNECTOR" \
  || bad "after eval: '$got'"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
