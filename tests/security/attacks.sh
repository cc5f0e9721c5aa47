#!/usr/bin/env bash
# Security tests of the subfile layout (issue 12; README "What tagg trusts and
# what it refuses"): each case is a real attack or damage in a temporary
# directory, run through H5Fopen/H5Fcreate/H5Fdelete (h5_attack, 2 ranks,
# HDF5_DRIVER=tagg) and through tagg-fuse (--check, --drain, fuse). Each
# asserts that the outside file is byte-identical afterwards, that every rank
# got an error (no hang: timeout 60) and what the message says.
#   attacks.sh ATTACK TAGG_FUSE WORKDIR PYTHON
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS PLUGIN_DIR H5DUMP [ASAN_PRELOAD]
set -u
prog=$1 fuse=$2 work=$3 py=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
craft() { "$py" "$here/craft.py" "$@"; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
host=$(hostname) uid=$(id -u)
# h5 OUT CONFIG OP FILE [N]: 2 ranks through tagg, at most 60 s
h5() {
  local out=$1 cfg=$2; shift 2
  HDF5_DRIVER_CONFIG="$cfg" HDF5_PLUGIN_PATH=$PLUGIN_DIR HDF5_DRIVER=tagg \
    timeout 60 "$MPIEXEC" $NPFLAG 2 ${PREFLAGS:-} "$prog" "$@" > "$out" 2>&1
}
# refused WHAT OUT RC PATTERN: failed (not by the timeout), on both ranks, with PATTERN
refused() {
  local what=$1 out=$2 rc=$3 pat=$4
  if [ "$rc" = 0 ]; then bad "$what: succeeded"; tail -5 "$out"; return; fi
  if [ "$rc" = 124 ]; then bad "$what: hung (timeout)"; return; fi
  if ! grep -q "rank 0: FAILED" "$out" || ! grep -q "rank 1: FAILED" "$out"; then
    bad "$what: not every rank got an error"; tail -20 "$out"; return; fi
  if ! grep -Eq -- "$pat" "$out"; then bad "$what: message lacks '$pat'"; grep -E "tagg|rank" "$out" | head -20; return; fi
  ok "$what: every rank fails, '$pat'"
}
# tool WHAT PATTERN CMD...: a tagg-fuse run fails (no hang) with PATTERN
tool() {
  local what=$1 pat=$2; shift 2
  timeout 60 "$@" > tool.out 2>&1; local rc=$?
  [ $rc = 0 ] && { bad "$what: succeeded"; cat tool.out; return; }
  [ $rc = 124 ] && { bad "$what: hung"; return; }
  grep -Eq -- "$pat" tool.out && ok "$what: fails with '$pat'" || { bad "$what: message lacks '$pat'"; cat tool.out; }
}
# the outside file an attacker wants destroyed or read
mkdir -p home && printf 'my thesis, 8 years of work\n' > home/thesis.txt && cp home/thesis.txt thesis.keep
printf 'sibling data\n' > thesis.txt && cp thesis.txt sibling.keep
intact() { cmp -s home/thesis.txt thesis.keep && cmp -s thesis.txt sibling.keep && ok "$1: outside files byte-identical" \
  || bad "$1: AN OUTSIDE FILE CHANGED: $(cat home/thesis.txt) / $(cat thesis.txt) ($(ls -l home/thesis.txt thesis.txt 2>&1))"; }
SF="layout=subfiles;stripe_size=4K;subfiles=2"
HEAD="tagg subfiled HDF5 file, use tagg-fuse IN OUT for one HDF5 file"
outside=$work/home/thesis.txt

# --- 1, 2: a format-2 index naming an outside file as a node-local subfile (closed, and "state open" for r+)
for state in closed open; do
  printf '%s\nformat 2\nlayout subfiles\ndestination nvr\nstate %s\nstripe_size 4096\nsubfile_count 1\nlogical_size 27\nchecksum crc64-xz\nmetadata 0 %s evil.h5.tagg.meta\nsubfile 0 27 %s %s\nnode 0 %s\n' \
    "$HEAD" "$state" "$(printf '' > evil.h5.tagg.meta; craft crc evil.h5.tagg.meta)" "$(craft crc "$outside")" "$outside" "$host" \
    | craft seal evil.h5
  h5 o.out "" read evil.h5 4; refused "1 ($state): read-only open of an index naming $outside" o.out $? "index line 11: node-local subfile 0 .* is not a path tagg derives"
  h5 o.out "" rw evil.h5 4; refused "2 ($state): read-write open (writes, truncation at close)" o.out $? "is not a path tagg derives"
  if [ $state = closed ]; then
    h5 o.out "" delete evil.h5; refused "1 ($state): H5Fdelete" o.out $? "is not a path tagg derives"
    h5 o.out "drain=close" read evil.h5 4; refused "1 ($state): drain=close" o.out $? "is not a path tagg derives"
  fi
  [ -e evil.h5 ] && ok "1 ($state): the index is kept when its names are refused" || bad "1 ($state): index removed"
  tool "1 ($state): tagg-fuse --check" "is not a path tagg derives" "$fuse" --check evil.h5
  tool "1 ($state): tagg-fuse --drain" "is not a path tagg derives" "$fuse" --drain evil.h5
  tool "1 ($state): tagg-fuse IN OUT" "is not a path tagg derives" "$fuse" evil.h5 fused.h5
  intact "1, 2 ($state)"
done
# ... /dev/zero as a node-local subfile (5): refused by the rule, no hang
printf '%s\nformat 2\nlayout subfiles\ndestination nvr\nstate open\nstripe_size 4096\nsubfile_count 1\nlogical_size 0\nchecksum crc64-xz\nmetadata 0 0000000000000000 zero.h5.tagg.meta\nsubfile 0 0 0000000000000000 /dev/zero\nnode 0 %s\n' \
  "$HEAD" "$host" | craft seal zero.h5
h5 o.out "" rw zero.h5 4; refused "5: r+ open of an index naming /dev/zero" o.out $? "'/dev/zero' is not a path tagg derives"
tool "5: tagg-fuse --check of an index naming /dev/zero" "is not a path tagg derives" "$fuse" --check zero.h5
# ... the create over such an index (layout=subfiles) removes nothing it names
h5 o.out "$SF" write evil.h5 4096 && grep -q "rank 1: ok write" o.out && ok "create over the hostile index succeeds (the stub is replaced)" \
  || { bad "create over the hostile index"; tail -5 o.out; }
intact "1: create (truncate) over a hostile index"

# --- 3: a format-1 index naming a sibling, and a ../ name
for name in thesis.txt ../home/thesis.txt; do
  printf '%s\nformat 1\nlayout subfiles\nstate closed\nstripe_size 4096\nsubfile_count 1\nlogical_size 14\nchecksum crc64-xz\nsubfile 0 14 %s %s\n' \
    "$HEAD" "$(craft crc thesis.txt)" "$name" | craft seal sib.h5
  case $name in thesis.txt) pat="index line 9: subfile 0 is named 'thesis.txt'; tagg only uses 'sib.h5.tagg.0of1'";;
                *) pat="subfile name '../home/thesis.txt' is not a plain name";; esac
  h5 o.out "" read sib.h5 4; refused "3 ($name): read" o.out $? "$pat"
  h5 o.out "" rw sib.h5 4; refused "3 ($name): r+ open and close" o.out $? "$pat"
  h5 o.out "" delete sib.h5; refused "3 ($name): H5Fdelete" o.out $? "$pat"
  tool "3 ($name): tagg-fuse --check" "$pat" "$fuse" --check sib.h5
  tool "3 ($name): tagg-fuse IN OUT" "$pat" "$fuse" sib.h5 fused.h5
  h5 o.out "$SF" write sib.h5 4096; grep -q "rank 0: ok write" o.out && ok "3 ($name): create with layout=subfiles over it" || bad "3: create over it"
  intact "3 ($name)"
done

# --- 4: symbolic links
h5 o.out "$SF" write x.h5 4096 && ok "a valid 2-subfile file written" || { bad "valid write"; tail -20 o.out; }
cp x.h5.tagg.1of2 sub1.keep; cp x.h5 x.keep
rm x.h5.tagg.1of2 && ln -s "$outside" x.h5.tagg.1of2
h5 o.out "" read x.h5 4096; refused "4: a subfile that is a symbolic link (read)" o.out $? "x.h5.tagg.1of2' is a symbolic link: refused"
h5 o.out "" rw x.h5 4096; refused "4: ... (r+)" o.out $? "is a symbolic link: refused"
tool "4: tagg-fuse --check" "REFUSED subfile 1 .*symbolic link" "$fuse" --check x.h5
tool "4: tagg-fuse IN OUT" "symbolic link" "$fuse" x.h5 fused.h5
h5 o.out "" delete x.h5; refused "4: H5Fdelete (HDF5 opens the file first)" o.out $? "is a symbolic link: refused"
[ -L x.h5.tagg.1of2 ] && [ -e x.h5 ] && ok "4: H5Fdelete left the link and the index for the user to inspect" || bad "4: delete removed files"
intact "4: linked subfile"
ln -s "$outside" new.h5.tagg.0of1
h5 o.out "layout=subfiles;subfiles=1" write new.h5 4096; refused "4: a link planted at new.h5.tagg.0of1 before create" o.out $? "cannot create '.*new.h5.tagg.0of1': it exists and is a symbolic link: refused"
[ -L new.h5.tagg.0of1 ] && ok "4: the planted link is left alone" || bad "4: planted link removed"
intact "4: planted link"
# hostile node-local directories: world-writable (with a link planted at the exact name), another owner
mkdir -p nvr1/tagg-$uid/$host && chmod 777 nvr1/tagg-$uid
ln -s "$outside" "nvr1/tagg-$uid/$host/$(craft nvrname nl.h5 0 1)"
h5 o.out "layout=subfiles;destination=nvr;nvr_dir=$work/nvr1" write nl.h5 4096
refused "4: node-local directory with mode 0777" o.out $? "node-local directory '.*/nvr1/tagg-$uid' has mode 777: writable by others, refused"
mkdir -p nvr2/tagg-$uid && chown nobody nvr2/tagg-$uid
h5 o.out "layout=subfiles;destination=nvr;nvr_dir=$work/nvr2" write nl.h5 4096
refused "4: node-local directory owned by nobody" o.out $? "node-local directory '.*/nvr2/tagg-$uid' belongs to uid [0-9]+, not to this user"
intact "4: hostile node-local directories"
h5 o.out "layout=subfiles;destination=nvr;nvr_dir=$work/nvr3" write nl.h5 4096 && h5 o2.out "" read nl.h5 4096 \
  && [ "$(stat -c %a nvr3/tagg-$uid)" = 700 ] && [ "$(stat -c %a nvr3/tagg-$uid/$host)" = 700 ] \
  && ok "4: tagg's own node-local directories are created 0700 and used" || { bad "4: private nvr dirs"; tail -5 o.out o2.out; }

# --- 5: a FIFO and /dev/zero where a subfile should be
h5 o.out "$SF" write x.h5 4096 >/dev/null
rm x.h5.tagg.0of2 && mkfifo x.h5.tagg.0of2
h5 o.out "" read x.h5 4096; refused "5: a FIFO as subfile (read)" o.out $? "x.h5.tagg.0of2' is not a regular file \(a FIFO\)"
h5 o.out "" rw x.h5 4096; refused "5: a FIFO as subfile (r+)" o.out $? "is not a regular file \(a FIFO\)"
tool "5: tagg-fuse --check with a FIFO" "a FIFO" "$fuse" --check x.h5
rm x.h5.tagg.0of2 && ln -s /dev/zero x.h5.tagg.0of2
h5 o.out "" rw x.h5 4096; refused "5: /dev/zero linked as subfile (r+)" o.out $? "is a symbolic link: refused"

# --- 6: a flipped byte, a truncated subfile
h5 o.out "$SF" write x.h5 4096 >/dev/null
h5 o.out "" read x.h5 4096 && grep -q "rank 1: ok read" o.out && ok "6: the intact file reads back (verify=1)" || { bad "6: intact read"; tail -20 o.out; }
printf '\x55' | dd of=x.h5.tagg.0of2 bs=1 seek=5000 conv=notrunc status=none
h5 o.out "" read x.h5 4096; refused "6: one flipped byte" o.out $? "CHECKSUM MISMATCH subfile 0 '.*x.h5.tagg.0of2', stripe 2 \(its bytes 4096..8191\)"
grep -q "WRONG DATA" o.out && bad "6: wrong data returned" || ok "6: no wrong data returned"
h5 o.out "verify=0" read x.h5 4096; grep -q "WRONG DATA" o.out && ok "6: with verify=0 the damage goes through (the check is what stops it)" \
  || bad "6: verify=0 did not show the damage: $(tail -3 o.out)"
tool "6: tagg-fuse --check" "CHECKSUM MISMATCH subfile 0 .*stripe 2" "$fuse" --check x.h5
# stripe 0, which rank 0 checks at a read-only open and broadcasts: damaged, nothing is shared, and every
# rank's first read of it (HDF5's superblock) fails as any other stripe's does
h5 o.out "$SF" write y.h5 4096 >/dev/null
printf '\x55' | dd of=y.h5.tagg.0of2 bs=1 seek=3000 conv=notrunc status=none
h5 o.out "" read y.h5 4096; refused "6: one flipped byte in stripe 0" o.out $? "CHECKSUM MISMATCH subfile 0 '.*y.h5.tagg.0of2', stripe 0 \(its bytes 0..4095\)"
grep -q "WRONG DATA" o.out && bad "6: wrong data returned (stripe 0)" || ok "6: no wrong data returned (stripe 0)"
tool "6: tagg-fuse IN OUT" "CHECKSUM MISMATCH subfile 0" "$fuse" x.h5 fused.h5
[ -e fused.h5 ] && bad "6: fused output of damaged input left" || ok "6: no fused output of damaged input"
h5 o.out "$SF" write x.h5 4096 >/dev/null
truncate -s -100 x.h5.tagg.1of2
h5 o.out "" read x.h5 4096; refused "6: a truncated subfile" o.out $? "subfile 1 '.*x.h5.tagg.1of2' has [0-9]+ bytes, its index records [0-9]+"
tool "6: tagg-fuse --check of a truncated subfile" "SIZE MISMATCH subfile 1" "$fuse" --check x.h5

# --- 7: a file left "state open" (its writer crashed)
h5 o.out "$SF" write x.h5 4096 >/dev/null
craft reopen x.h5
h5 o.out "" read x.h5 4096; refused "7: read-only open of a 'state open' file" o.out $? "its index says 'state open'.*tagg-fuse --check .*salvage=1"
h5 o.out "" rw x.h5 4096; refused "7: read-write open of it" o.out $? "its index says 'state open'.*Refused"
h5 o.out "salvage=1" rw x.h5 4096; refused "7: salvage=1 is read-only" o.out $? "Refused for writing"
h5 o.out "salvage=1" read x.h5 4096 && grep -q "rank 1: ok read" o.out && ok "7: salvage=1 reads what it holds" || { bad "7: salvage read"; tail -10 o.out; }
tool "7: tagg-fuse --check" "NOT CLOSED" "$fuse" --check x.h5
# ... a real failed writer: out of space injected on one node-local write leaves the index open
TAGG_FAULT="nvr_write:rank=1" h5 o.out "layout=subfiles;destination=nvr;nvr_dir=$work/nvr4" write crash.h5 4096
grep -aq "^state open$" crash.h5 && ok "7: a writer that failed left 'state open'" || bad "7: index after a failed write: $(grep -a '^state' crash.h5)"
h5 o.out "" read crash.h5 4096; refused "7: reading the failed writer's file" o.out $? "state open"

# --- 6 in read-write opens: damage is never blessed by a rewrite, nor read unnoticed
# flip LOGICAL_ADDRESS FILE: one byte of FILE's subfiles (stripe 4096, 2 subfiles) changed
flip() {
  local a=$1 j=$(($1 / 4096)); local k=$((j % 2)) local=$(((j / 2) * 4096 + $1 % 4096))
  local v=$(od -A n -t u1 -j $local -N 1 "$2.tagg.$k""of2" | tr -d ' ')
  printf "\\$(printf %o $(((v ^ 0x55) & 255)))" | dd of="$2.tagg.$k""of2" bs=1 seek=$local conv=notrunc status=none
}
h5 o.out "$SF" write x.h5 4096 >/dev/null
h5 o.out "" where x.h5 && A=$(sed -n 's/^address //p' o.out) || { bad "where: $(tail -3 o.out)"; A=0; }
flip $((A + 8)) x.h5   # d[2], in the stripe of d[0]
h5 o.out "" poke x.h5; refused "6 (r+): a partial rewrite of a damaged stripe" o.out $? "CHECKSUM MISMATCH found at close of '.*x.h5': 1 stripe\(s\).*partial writes to them were applied over the damaged bytes"
h5 o.out "" read x.h5 4096; refused "6 (r+): the damage stays visible after that close" o.out $? "CHECKSUM MISMATCH subfile"
h5 o.out "$SF" write x.h5 4096 >/dev/null
flip $((A + 4 * 4095)) x.h5   # d's last element
h5 o.out "" rwread x.h5 4096; refused "6 (r+): a read of a damaged stripe in a read-write open" o.out $? "CHECKSUM MISMATCH found at close.*Reads of them in this open returned those bytes unverified"
h5 o.out "" read x.h5 4096; refused "6 (r+): ... and the damage stays visible" o.out $? "CHECKSUM MISMATCH subfile"
h5 o.out "$SF" write x.h5 4096 >/dev/null
flip $((A + 4 * 4095)) x.h5
h5 o.out "" append x.h5 5000; refused "6 (r+): the file grows past a damaged last stripe" o.out $? "CHECKSUM MISMATCH found at close"
h5 o.out "$SF" write x.h5 4096 >/dev/null
h5 o.out "" poke x.h5 && h5 o.out "" rwread x.h5 4096 && h5 o.out "" read x.h5 4096 && grep -q "rank 1: ok read" o.out \
  && ok "6 (r+): intact file: a partial rewrite and a read-write read pass, and read back verified" || { bad "6 (r+): intact file"; tail -8 o.out; }

# --- checksums stay right across read-write opens: rewrite in place, then grow the file
h5 o.out "$SF" write x.h5 4096 >/dev/null
h5 o.out "" rw x.h5 4096 && h5 o.out "" append x.h5 5000 && h5 o.out "" read x.h5 4096 && grep -q "rank 1: ok read" o.out \
  && "$fuse" --check x.h5 > tool.out 2>&1 && ok "r+ rewrite and growth: every stripe checksum right (read with verify=1, --check)" \
  || { bad "r+ rewrite and growth"; tail -5 o.out; cat tool.out; }

# --- format 3 and stock HDF5: the signature at 512, refused clearly without tagg, never misread
h5 o.out "$SF" write x.h5 4096 >/dev/null
[ "$(od -A n -t x1 -j 512 -N 9 x.h5 | tr -d ' \n')" = "894844460d0a1a0aff" ] && ok "format 3: HDF5 signature at byte 512, superblock version 255" \
  || bad "bytes at 512: $(od -A n -t x1 -j 512 -N 16 x.h5)"
(unset HDF5_DRIVER HDF5_PLUGIN_PATH; "$H5DUMP" -H x.h5) > dump.out 2>&1 && bad "stock h5dump opened the index" \
  || { grep -q "DATASET" dump.out && bad "stock h5dump printed a dataset from the index" || ok "stock h5dump refuses the index (no misread)"; }
HDF5_PLUGIN_PATH=$PLUGIN_DIR HDF5_DRIVER=tagg LD_PRELOAD=${ASAN_PRELOAD:-} ASAN_OPTIONS=detect_leaks=0 "$H5DUMP" -H x.h5 > dump.out 2>&1 && grep -q 'DATASET "d"' dump.out \
  && ok "h5dump through tagg reads it" || { bad "h5dump through tagg"; head dump.out; }

# --- no hang on huge sparse files: 2^33 x 15 float32 (480 GiB of address space), nothing written
for layout in shared subfiles; do
  h5 o.out "layout=$layout" sparse big-$layout.h5; rc=$?
  [ $rc = 0 ] && grep -q "rank 1: ok sparse" o.out && ok "sparse 480 GiB dataset, layout=$layout: create, close, reopen, fill values ($(grep '^sparse:' o.out))" \
    || { bad "sparse, layout=$layout: exit $rc"; tail -20 o.out; }
done
isz=$(stat -c %s big-subfiles.h5 2>/dev/null || echo 0)
[ "$isz" -lt 65536 ] && ok "sparse: the index stays small ($isz bytes)" || bad "sparse: index of $isz bytes"
rm -f big-*.h5*

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
