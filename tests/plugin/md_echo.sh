#!/usr/bin/env bash
# Metadata echoes through HDF5 and the plugin (core/src/md_echo.c): a file of
# one process (h5_serial_flush, HDF5_DRIVER=tagg) leaves out HDF5's second,
# identical superblock write (at close, after the flush wrote it), and HDF5
# alone reads the file back whole (h5dump, every value), also when the data
# changed after the flush; in the subfile layout tagg-fuse turns it into one
# HDF5 file (checking every stripe) that HDF5 alone reads back. Files of two
# ranks leave nothing out.
#   md_echo.sh SERIAL_PROG TAGG_FUSE WORKDIR
# Environment: MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR H5DUMP
set -u
prog=$1 fuse=$2 work=$3; rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
echoes() { awk '/^tagg: file=/ { for (i = 1; i <= NF; i++) if ($i ~ /^md_echoes=/) { split($i, kv, "="); n += kv[2] } }
          END { print n + 0 }' "$1"; }
values() { # the dataset's values as h5dump prints them, one per line
  env -u HDF5_DRIVER -u HDF5_DRIVER_CONFIG -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "$H5DUMP" -d /data -y -w 0 "$1" \
    | sed -n '/DATA {/,/}/p' | grep -o '[0-9]\+' ; }
serial() { # name config mode(plain|change)
  local name=$1 cfg=$2 mode=$3 n want
  rm -f s.h5*
  if ! HDF5_DRIVER=tagg HDF5_DRIVER_CONFIG="$cfg" HDF5_PLUGIN_PATH=$PLUGIN_DIR TAGG_VERBOSE=1 timeout 120 "$prog" s.h5 $mode \
       > out.txt 2>&1; then bad "$name: the program failed"; cat out.txt; return; fi
  n=$(echoes out.txt)
  if [ "$n" -lt 1 ]; then bad "$name: no metadata echo left out"; grep "^tagg: file" out.txt; return; fi
  if [ "$cfg" = layout=subfiles ]; then
    ok "$name: $n metadata echo(es) left out, written (read back in the next test)"
    return
  fi
  want=$(awk -v c="$mode" 'BEGIN { for (i = 0; i < 1000; i++) print (c == "change" ? 2 * i + 1 : i) }')
  if [ "$(values s.h5)" != "$want" ]; then bad "$name: HDF5 alone does not read back the 1000 values"; values s.h5 | head; return; fi
  ok "$name: $n metadata echo(es) left out, every value read back by HDF5 alone"
}
serial shared_plain "layout=shared" plain
serial shared_changed "layout=shared" change
serial subfiles_changed "layout=subfiles" change
# the subfiled file just written: tagg-fuse (every stripe checked) to one HDF5 file, read by HDF5 alone
want=$(awk 'BEGIN { for (i = 0; i < 1000; i++) print 2 * i + 1 }')
if "$fuse" s.h5 fused.h5 > fuse.txt 2>&1 && [ "$(values fused.h5)" = "$want" ]; then
  ok "subfiles_changed: tagg-fuse's copy holds every value"
else bad "subfiles_changed: tagg-fuse failed or the values differ"; cat fuse.txt; fi
# metadata that changes after the flush (an attribute) reaches the file
rm -f s.h5*
if HDF5_DRIVER=tagg HDF5_PLUGIN_PATH=$PLUGIN_DIR TAGG_VERBOSE=1 timeout 120 "$prog" s.h5 attr > out.txt 2>&1 \
   && [ "$(values s.h5 | tr '\n' ' ' | cut -c1-20)" = "0 1 2 3 4 5 6 7 8 9 " ] \
   && env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$H5DUMP" -a /data/a s.h5 2>&1 | grep -q '(0): 42'; then
  ok "attribute after the flush: read back by HDF5 alone ($(echoes out.txt) echo(es) left out)"
else bad "attribute after the flush: not read back"; env -u HDF5_DRIVER -u HDF5_PLUGIN_PATH "$H5DUMP" -a /data/a s.h5 | head; fi
# two ranks: nothing left out
TAGG_VERBOSE=1 HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG 2 ${PREFLAGS:-} "$BENCH" --reps 2 --fsync --dir "$work" \
  --kernel array1d --dist random --size 100K --variants tagg-shared > bench.txt 2>&1 </dev/null
if grep -q '^tagg-shared .* ok$' bench.txt && [ "$(echoes bench.txt)" = 0 ] && grep -q '^tagg: file=.*md_write_bytes=[1-9]' bench.txt; then
  ok "two ranks: verified, no metadata echo left out"
else bad "two ranks: $(echoes bench.txt) echoes or a failed run"; tail -5 bench.txt; fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -ge 6 ]
