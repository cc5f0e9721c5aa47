#!/usr/bin/env bash
# The subfile layout end to end: the workload through HDF5_DRIVER=tagg with
# small stripes over 3 subfiles, compared with the MPI-IO driver's file via
# tagg-fuse; read back with other rank counts and another configuration;
# tagg-fuse --check on the intact file and on damaged copies; H5Fdelete.
#   subfiles.sh NP WORKLOAD TAGG_FUSE WORKDIR [EXTRA_CONFIG]
# EXTRA_CONFIG (e.g. "compression=zstd") is added to the writer's configuration;
# with compression= the summary must report a ratio below 1 (this workload's
# small strided datasets give few whole stripes, most of them expanded again
# by later partial writes: the probe and expansion paths; compression.sh
# covers compressed stripes that stay, and their damage).
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS H5DIFF H5DUMP PLUGIN_DIR
set -u
np=$1 prog=$2 fuse=$3 work=$4 extra=${5:-}
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mkdir -p "$work" && cd "$work" || exit 1
# expect_fail WHAT PATTERN COMMAND...: the command fails and its output has PATTERN
expect_fail() {
  local what=$1 pat=$2; shift 2
  "$@" > fail.out 2>&1 && { bad "$what: succeeded"; return; }
  grep -q -- "$pat" fail.out && ok "$what: fails with '$pat'" || { bad "$what: message lacks '$pat'"; cat fail.out; }
}
CFG="layout=subfiles;stripe_size=4K;subfiles=3${extra:+;$extra}"
comp=0; case "$extra" in *compression=*) comp=1 ;; esac
N=3

for md in coll indep; do
  rm -rf ref.h5 sf.h5* fused.h5 damaged
  (unset HDF5_DRIVER HDF5_VOL_CONNECTOR HDF5_PLUGIN_PATH; run "$np" "$prog" ref.h5 mpio "$md") > ref.out 2>&1 \
    && ok "$md: reference run on the MPI-IO driver" || { bad "$md: reference run"; cat ref.out; continue; }
  HDF5_DRIVER_CONFIG="$CFG" TAGG_VERBOSE=1 tagg run "$np" "$prog" sf.h5 default "$md" > sf.out 2>&1
  rc=$?
  [ $rc = 0 ] && grep -q "failures=0" sf.out && grep -q "layout=subfiles" sf.out \
    && ok "$md: workload on layout=subfiles reads back every element" \
    || { bad "$md: workload on layout=subfiles, exit $rc"; tail -40 sf.out; continue; }

  # the files: an index that says what it is, N non-empty subfiles
  if [ $comp = 1 ]; then
    ratio=$(grep -o 'comp_ratio=[0-9.]*' sf.out | head -1 | cut -d= -f2)
    awk -v r="${ratio:-1}" 'BEGIN { exit !(r < 1) }' && ok "$md: summary reports comp_ratio=$ratio" \
      || bad "$md: summary comp_ratio '${ratio}' (want < 1): $(grep -o 'compression=.*' sf.out | head -1)"
    stored=$(cat sf.h5.tagg.* | tr -d '\0' | wc -c); raw=$(grep -a '^logical_size' sf.h5 | cut -d' ' -f2)
    [ "$stored" -lt "$raw" ] && ok "$md: subfiles hold $stored non-zero bytes for $raw logical bytes" \
      || bad "$md: $stored non-zero stored bytes for $raw logical bytes"
  fi
  head -c 64 sf.h5 | grep -q "^tagg subfiled HDF5 file, use tagg-fuse" && ok "$md: index starts with its description" \
    || bad "$md: index head is '$(head -c 64 sf.h5)'"
  n=0; for k in $(seq 0 $((N - 1))); do [ -s "sf.h5.tagg.${k}of$N" ] && n=$((n + 1)); done
  [ $n = $N ] && ok "$md: all $N subfiles hold data" || bad "$md: $n of $N subfiles hold data: $(ls -l sf.h5*)"
  "$H5DUMP" -H sf.h5 > dump.out 2>&1 && bad "$md: stock h5dump opened the index as HDF5" \
    || ok "$md: stock h5dump does not take the index for an HDF5 file"

  # fuse, compare, check
  "$fuse" sf.h5 fused.h5 > fuse.out 2>&1 && ok "$md: tagg-fuse" || { bad "$md: tagg-fuse"; cat fuse.out; }
  "$H5DIFF" ref.h5 fused.h5 > diff.out 2>&1 && ok "$md: h5diff finds no difference to the MPI-IO file" \
    || { bad "$md: h5diff"; head -20 diff.out; }
  cmp -s ref.h5 fused.h5 && ok "$md: fused file is byte-identical to the MPI-IO driver's" || bad "$md: fused file differs byte-wise"
  "$H5DUMP" fused.h5 > /dev/null 2>&1 && ok "$md: stock h5dump reads the fused file" || bad "$md: h5dump of the fused file"
  "$fuse" --check sf.h5 > check.out 2>&1 && grep -q ": OK:" check.out && ok "$md: tagg-fuse --check passes" \
    || { bad "$md: tagg-fuse --check"; cat check.out; }

  # read back with other rank counts and another configuration (S and N come from the index)
  for n in 2 3; do
    HDF5_DRIVER_CONFIG="layout=subfiles;stripe_size=1M;subfiles=5" tagg run $n "$prog" sf.h5 default "$md" verify > v.out 2>&1 \
      && grep -q "failures=0" v.out && ok "$md: $n ranks with another configuration read back every element" \
      || { bad "$md: read back with $n ranks"; tail -20 v.out; }
  done
  tagg run 2 "$prog" sf.h5 default "$md" verify > v.out 2>&1 && grep -q "failures=0" v.out \
    && ok "$md: read back with the default configuration (layout found from the index)" || { bad "$md: default-config read"; tail -20 v.out; }
  "$fuse" --check sf.h5 > /dev/null 2>&1 && ok "$md: reading did not change the file" || bad "$md: file changed by reading"
done

# damaged copies: each must fail --check with the right message
mkdir -p damaged
fresh() { rm -f damaged/*; cp sf.h5 sf.h5.tagg.* damaged/; }
fresh; printf '\x55' | dd of=damaged/sf.h5.tagg.1of3 bs=1 seek=5000 conv=notrunc status=none
cmp -s sf.h5.tagg.1of3 damaged/sf.h5.tagg.1of3 && printf '\xaa' | dd of=damaged/sf.h5.tagg.1of3 bs=1 seek=5000 conv=notrunc status=none
expect_fail "one byte changed in a subfile" "CHECKSUM MISMATCH subfile 1" "$fuse" --check damaged/sf.h5
expect_fail "fusing it" "CHECKSUM MISMATCH subfile 1" "$fuse" damaged/sf.h5 damaged/out.h5
[ -e damaged/out.h5 ] && bad "fused output of damaged input left behind" || ok "fused output of damaged input removed"
fresh; rm damaged/sf.h5.tagg.2of3
expect_fail "a subfile deleted" "MISSING subfile 2" "$fuse" --check damaged/sf.h5
expect_fail "opening it through tagg (4 ranks, no hang)" "subfile 2 of .* is missing" \
  tagg run "$np" "$prog" damaged/sf.h5 default coll verify
fresh; truncate -s -100 damaged/sf.h5.tagg.0of3
expect_fail "a subfile truncated" "SIZE MISMATCH subfile 0" "$fuse" --check damaged/sf.h5
fresh; sed -i '1s/^tagg/TAGG/' damaged/sf.h5
expect_fail "bad magic" "bad magic" "$fuse" --check damaged/sf.h5
fresh; sed -i 's/^format [0-9]$/format 9/' damaged/sf.h5
expect_fail "unknown version" "unsupported index format version 9" "$fuse" --check damaged/sf.h5
fresh; sed -i 's/^logical_size \([0-9]*\)$/logical_size 1\1/' damaged/sf.h5
expect_fail "index edited" "index checksum mismatch" "$fuse" --check damaged/sf.h5
expect_fail "usage" "usage:" "$fuse" --check

# H5Fdelete through the driver removes the index and every subfile
HDF5_DRIVER_CONFIG="$CFG" tagg run "$np" "$prog" sf.h5 default coll delete > del.out 2>&1 && grep -q "failures=0" del.out \
  && ok "H5Fdelete returns success" || { bad "H5Fdelete"; cat del.out; }
left=$(ls sf.h5* 2>/dev/null)
[ -z "$left" ] && ok "H5Fdelete removed the index and all subfiles" || bad "H5Fdelete left: $left"

# ... also when the configuration does not name the layout (found from the index)
HDF5_DRIVER_CONFIG="$CFG" tagg run "$np" "$prog" sf.h5 default coll > sf.out 2>&1 \
  && tagg run "$np" "$prog" sf.h5 default coll delete > del.out 2>&1 && [ -z "$(ls sf.h5* 2>/dev/null)" ] \
  && ok "H5Fdelete with the default configuration removed the index and all subfiles" \
  || { bad "H5Fdelete with the default configuration: left $(ls sf.h5* 2>/dev/null)"; cat del.out; }

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
