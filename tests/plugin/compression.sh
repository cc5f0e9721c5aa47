#!/usr/bin/env bash
# Compression of the subfile layout end to end (issue 15), through HDF5:
# h5_comp writes HACC- and S3D-like datasets and incompressible noise with
# compression on; the file must read back with other rank counts, fuse to a
# file h5diff-identical to the MPI-IO driver's (after the write and after a
# read-write open with partial rewrites by every rank), pass tagg-fuse --check,
# and a damaged compressed stripe must fail --check, fusing, and a read through
# tagg on every rank (no crash, no hang).
#   compression.sh NP H5_COMP TAGG_FUSE WORKDIR CONFIG
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS H5DIFF PLUGIN_DIR
set -u
np=$1 prog=$2 fuse=$3 work=$4 extra=$5
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mkdir -p "$work" && cd "$work" || exit 1
mpio() { (unset HDF5_DRIVER HDF5_VOL_CONNECTOR HDF5_PLUGIN_PATH; "$@"); }
CFG="layout=subfiles;stripe_size=16K;subfiles=3;$extra"
N=3 NPART=100000
ZLINE='^s [0-9]* [0-9a-f]* [a-z0-9-]* [0-9]* [0-9]* [0-9]*$'
rm -rf ./*

# references on the MPI-IO driver: after the write, after the rewrite
mpio run "$np" "$prog" ref.h5 mpio write $NPART > ref.out 2>&1 && cp ref.h5 ref-w.h5 \
  && mpio run "$np" "$prog" ref.h5 mpio rewrite $NPART >> ref.out 2>&1 \
  && ok "references on the MPI-IO driver" || { bad "reference runs"; cat ref.out; }

HDF5_DRIVER_CONFIG="$CFG" TAGG_VERBOSE=1 tagg run "$np" "$prog" sf.h5 default write $NPART > w.out 2>&1 \
  && grep -q "failures=0" w.out && ok "write with $extra on $np ranks reads back" || { bad "write"; tail -30 w.out; }
nz=$(grep -ac "$ZLINE" sf.h5); nr=$(grep -ac '^s [0-9]* [0-9a-f]*$' sf.h5)
[ "$nz" -gt 0 ] && [ "$nr" -gt 0 ] && ok "the index records $nz compressed and $nr raw stripes (the noise does not shrink)" \
  || bad "index: $nz compressed, $nr raw stripes"
line=$(grep -o 'compression=[^ ]* comp_codec=[^ ]* comp_logical_bytes=[0-9]* comp_stored_bytes=[0-9]* comp_ratio=[0-9.]*' w.out | head -1)
ratio=${line##*comp_ratio=}
awk -v r="${ratio:-1}" 'BEGIN { exit !(r > 0 && r < 1) }' && ok "summary: $line" || bad "summary: '$line'"
used=$(du -k --apparent-size -c sf.h5.tagg.* | tail -1 | cut -f1); real=$(du -k -c sf.h5.tagg.* | tail -1 | cut -f1)
echo "subfiles: ${used} KiB apparent, ${real} KiB allocated"

for n in 2 3; do
  tagg run $n "$prog" sf.h5 default verify $NPART > v.out 2>&1 && grep -q "failures=0" v.out \
    && ok "read back on $n ranks (default configuration)" || { bad "read back on $n ranks"; tail -20 v.out; }
done
"$fuse" --check sf.h5 > check.out 2>&1 && grep -q ": OK:" check.out && ok "tagg-fuse --check" || { bad "--check"; cat check.out; }
"$fuse" sf.h5 fused.h5 > fuse.out 2>&1 && ok "tagg-fuse" || { bad "tagg-fuse"; cat fuse.out; }
"$H5DIFF" ref-w.h5 fused.h5 > diff.out 2>&1 && ok "h5diff: the fused file equals the MPI-IO driver's" \
  || { bad "h5diff after the write"; head -20 diff.out; }
cmp -s ref-w.h5 fused.h5 && echo "note: byte-identical too" || echo "note: not byte-identical (h5diff decides)"

# read-write open: partial rewrites of compressed stripes by every rank
HDF5_DRIVER_CONFIG="$CFG" TAGG_VERBOSE=1 tagg run "$np" "$prog" sf.h5 default rewrite $NPART > r.out 2>&1 \
  && grep -q "failures=0" r.out && ok "partial rewrites by $np ranks read back" || { bad "rewrite"; tail -30 r.out; }
for n in 2 3 4; do
  tagg run $n "$prog" sf.h5 default verify $NPART > v.out 2>&1 && grep -q "failures=0" v.out \
    && ok "after the rewrite: read back on $n ranks" || { bad "after the rewrite: $n ranks"; tail -20 v.out; }
done
"$fuse" --check sf.h5 > check.out 2>&1 && grep -q ": OK:" check.out && ok "tagg-fuse --check after the rewrite" \
  || { bad "--check after the rewrite"; cat check.out; }
rm -f fused.h5; "$fuse" sf.h5 fused.h5 > fuse.out 2>&1 && "$H5DIFF" ref.h5 fused.h5 > diff.out 2>&1 \
  && ok "h5diff after the rewrite: equal to the MPI-IO driver's" || { bad "h5diff after the rewrite"; cat fuse.out; head -20 diff.out; }
nz2=$(grep -ac "$ZLINE" sf.h5)
[ "$nz2" -gt 0 ] && ok "after the rewrite $nz2 stripes stay compressed (of $nz)" || bad "no compressed stripe left"

# a damaged compressed stripe: in its codec block, and in its header
mkdir -p damaged
for at in 200 20; do
  rm -f damaged/*; cp sf.h5 sf.h5.tagg.* damaged/
  l=$(grep -a "$ZLINE" sf.h5 | head -1)
  [ -n "$l" ] || { bad "no compressed stripe to damage"; break; }
  set -- $l; j=$2 off=$5 k=$(( $2 % N ))
  f=damaged/sf.h5.tagg.${k}of$N
  printf '\x55' | dd of=$f bs=1 seek=$((off + at)) conv=notrunc status=none
  cmp -s sf.h5.tagg.${k}of$N $f && printf '\xaa' | dd of=$f bs=1 seek=$((off + at)) conv=notrunc status=none
  "$fuse" --check damaged/sf.h5 > fail.out 2>&1 && bad "--check passed a damaged compressed stripe" \
    || { grep -q "subfile $k .*stripe $j (compressed" fail.out && ok "damage at byte $at of stripe $j: --check names subfile $k stripe $j" \
         || { bad "--check message"; cat fail.out; }; }
  "$fuse" damaged/sf.h5 damaged/out.h5 > fail.out 2>&1 && bad "fused a damaged compressed stripe" \
    || { [ ! -e damaged/out.h5 ] && ok "fusing it fails, no output left" || bad "fused output left"; }
  rm -f fail.err.*
  tagg run "$np" "$each_rank" fail.err "$prog" damaged/sf.h5 default verify $NPART > fail.out 2>&1; rc=$?
  cat fail.err.* >> fail.out 2>/dev/null
  [ $rc != 0 ] && [ $rc != 124 ] && ! grep -qi "signal\|abort\|segmentation" fail.out \
    && grep -q "stripe $j (compressed" fail.out && on_every_rank fail.err "MPI-process" "$np" \
    && ok "reading it through tagg: an error naming stripe $j on all $np ranks, exit $rc" \
    || { bad "reading it through tagg: exit $rc, not every one of $np ranks reports"; grep -a "stripe\|process\|ignal\|bort" fail.out | head -20; }
done

# verify=0 (README: verify): a compressed stripe whose index record has another CRC (its block
# intact) reads back unchecked, verify=1 fails naming it; a malformed block fails with either
rm -f damaged/*; cp sf.h5.tagg.* damaged/
l=$(grep -a "$ZLINE" sf.h5 | head -1); set -- $l; j=$2 off=$5 k=$(( $2 % N ))
python3 - "$j" sf.h5 damaged/sf.h5 "$(dirname "${BASH_SOURCE[0]}")/../security/craft.py" <<'EOF'
import importlib.util, sys
j, src, dst, craft = sys.argv[1:5]
spec = importlib.util.spec_from_file_location("craft", craft)
c = importlib.util.module_from_spec(spec)
spec.loader.exec_module(c)
text = open(src, "rb").read()
lines = text[: text.rindex(b"index_crc64 ")].split(b"\n")
for i, line in enumerate(lines):
    f = line.split(b" ")
    if len(f) == 7 and f[0] == b"s" and f[1] == j.encode():
        f[2] = b"%016x" % (int(f[2], 16) ^ 1)
        lines[i] = b" ".join(f)
open(dst, "wb").write(c.seal(b"\n".join(lines)))
EOF
HDF5_DRIVER_CONFIG="verify=0" tagg run "$np" "$prog" damaged/sf.h5 default verify $NPART > v0.out 2>&1 \
  && grep -q "failures=0" v0.out && ok "verify=0: stripe $j, its record's CRC changed, reads back unchecked" \
  || { bad "verify=0 with a changed record"; grep -a "stripe\|failures" v0.out | head -10; }
tagg run "$np" "$prog" damaged/sf.h5 default verify $NPART > v1.out 2>&1 \
  && bad "verify=1 read stripe $j, whose record has another CRC" \
  || { grep -q "stripe $j (compressed" v1.out && ok "verify=1: the changed record fails the read naming stripe $j" \
       || { bad "verify=1 message"; grep -a "stripe\|process" v1.out | head -10; }; }
cp sf.h5 damaged/sf.h5
printf '\x55' | dd of=damaged/sf.h5.tagg.${k}of$N bs=1 seek=$((off + 20)) conv=notrunc status=none
HDF5_DRIVER_CONFIG="verify=0" tagg run "$np" "$prog" damaged/sf.h5 default verify $NPART > v0.out 2>&1 \
  && bad "verify=0 read a compressed stripe with a damaged header" \
  || { grep -q "stripe $j (compressed" v0.out && ok "verify=0: a damaged header still fails naming stripe $j" \
       || { bad "verify=0, damaged header: message"; grep -a "stripe\|process" v0.out | head -10; }; }

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
