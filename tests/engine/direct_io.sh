#!/usr/bin/env bash
# direct_io through the whole stack (HDF5 -> tagg VFD -> engine -> layout), in
# the build tree (ext4 here, not FUSE): tagg-bench's column blocks and large
# contiguous blocks on 2 ranks, verified byte for byte, with the summary line's
# dio_write_bytes / dio_read_bytes. on: both > 0 (shared and subfiles); write:
# written > 0, read 0 (reads buffered; shared and subfiles); auto on ext4
# with fsync=1 as write (shared and subfiles), and auto after the
# application's first sync (H5Fflush): the first file written buffered, the
# next one directly, the reads of both buffered; and
# the aggregated write's single domain starts at a whole 4 KiB block (plan
# range [0, ...) where the data starts at 2 KiB); auto on ext4 and off: 0,
# the range from 2048. A single domain that starts at 2 KiB because only then
# its data fits the buffers in one round (exactly 2 MiB in 2 x 1 MiB): every
# direct byte moves in place, none through dio.c's bounce buffer
# (dio_bounced_bytes 0: the round lies in the buffers as in the file, modulo
# 4 KiB, engine_move.c). Two aggregators' balanced domains on either side
# of direct_io_min both go direct (judged by the call's round).
# Environment: MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR
set -u
work=$1; rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
# summed dio bytes of the summary lines: "written read bounced"
dio() { awk '/^tagg: file=/ { for (i = 1; i <= NF; i++) { split($i, kv, "=")
        if (kv[1] == "dio_write_bytes") w += kv[2]; if (kv[1] == "dio_read_bytes") r += kv[2]
        if (kv[1] == "dio_bounced_bytes") b += kv[2] } }
        END { print w + 0, r + 0, b + 0 }' out.txt; }
bench() { # kernel args..., then --tagg-config
  TAGG_VERBOSE=2 HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG 2 ${PREFLAGS:-} "$BENCH" --reps 1 \
    --dir "$work" --variants tagg-shared "$@" > out.txt 2>&1 </dev/null
}
check() { # name want(on|inplace|none) want-range-start kernel-args... -- config
  local name=$1 want=$2 lo=$3; shift 3
  bench "$@"
  local rc=$? d w r b start
  d=$(dio); read -r w r b <<< "$d"
  start=$(grep -m1 "tagg: write call range=" out.txt | sed -n 's/.*range=\[\([0-9]*\),.*/\1/p')
  if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "$name: tagg-bench exit $rc"; tail -20 out.txt; return; fi
  if [ "$want" = writes ] && { [ "$w" = 0 ] || [ "$r" != 0 ]; }; then bad "$name: dio bytes written $w, read $r (want > 0, 0)"; return; fi
  if [ "$want" != none ] && [ "$want" != writes ] && { [ "$w" = 0 ] || [ "$r" = 0 ]; }; then bad "$name: dio bytes written $w, read $r (want > 0)"; return; fi
  if [ "$want" = inplace ] && [ "$b" != 0 ]; then bad "$name: $b dio bytes through the bounce buffer (want 0)"; grep "call range" out.txt; return; fi
  if [ "$want" = none ] && [ "$d" != "0 0 0" ]; then bad "$name: dio bytes written $w, read $r (want 0)"; return; fi
  if [ -n "$lo" ] && [ "$start" != "$lo" ]; then bad "$name: the write's range starts at '$start' (want $lo)"; grep "call range" out.txt; return; fi
  ok "$name: verified, dio bytes written $w, read $r, bounced $b${lo:+, write range from $lo}"
}
cols=(--kernel columns --cols 2048 --rows 256)   # 2 MiB of column blocks from 2 KiB: aggregated, 1 domain
big=(--kernel array1d --dist uniform --size 3M)  # 3 MiB per rank in one run: direct accesses
check on_columns on 0 "${cols[@]}" --tagg-config "direct_io=on;direct_io_min=64K;buffer_size=256K;aggregate=always;aggregators=1"
check on_fit inplace 2048 --kernel columns --cols 2048 --rows 64 --tagg-config "direct_io=on;direct_io_min=64K;buffer_size=1M;buffers=2;aggregate=always;aggregators=1"
check on_contig on "" "${big[@]}" --tagg-config "direct_io=on"
check on_subfiles on "" "${cols[@]}" --tagg-config "direct_io=on;direct_io_min=64K;buffer_size=256K;aggregate=always;aggregators=1;layout=subfiles;subfiles=2;stripe_size=256K"
check write_contig writes "" "${big[@]}" --tagg-config "direct_io=write"
check write_subfiles writes "" "${cols[@]}" --tagg-config "direct_io=write;direct_io_min=64K;buffer_size=256K;aggregate=always;aggregators=1;layout=subfiles;subfiles=2;stripe_size=256K"
check auto_fsync writes "" "${big[@]}" --tagg-config "fsync=1"
check auto_fsync_subfiles writes "" "${cols[@]}" --tagg-config "fsync=1;direct_io_min=64K;buffer_size=256K;aggregate=always;aggregators=1;layout=subfiles;subfiles=2;stripe_size=256K"
# auto, the application syncs (tagg-bench --fsync: H5Fflush before close) two
# files one after the other in one process: "written read" of each file's line
files_dio() { awk '/^tagg: file=/ { w = r = rw = 0; for (i = 1; i <= NF; i++) { split($i, kv, "=")
        if (kv[1] == "dio_write_bytes") w = kv[2]; if (kv[1] == "dio_read_bytes") r = kv[2]
        if (kv[1] == "raw_write_bytes") rw = kv[2] }
        printf "%s:%s:%s ", (rw > 0 ? "w" : "r"), w + 0, r + 0 } END { print "" }' out.txt; }
learned() {
  bench "${big[@]}" --reps 2 --fsync --tagg-config "direct_io_min=1M"
  local rc=$? got
  got=$(files_dio)
  if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "auto_learned: tagg-bench exit $rc"; tail -20 out.txt; return; fi
  # written files: the first buffered, the second direct; read-only opens
  # (the read, the deletion's probe): nothing direct
  if ! [[ "$got" =~ ^w:0:0\ (r:0:0\ )+w:[1-9][0-9]*:0\ (r:0:0\ )+$ ]]; then bad "auto_learned: per file (kind:written:read) '$got' (want w:0:0 r:0:0... w:>0:0 r:0:0...)"; return; fi
  ok "auto_learned: verified, per file $got"
}
learned
# Two balanced domains of VPIC AoS 32K's reads ([0, 2 MiB + 4 KiB): 1 MiB +
# 64 KiB and 1 MiB - 60 KiB) with direct_io_min=1M: both aggregators' rounds
# go direct, judged by the call's round (before session 51 the shorter one
# was buffered: 8880128 of the 16 MiB read direct). The read file's summary.
rounds() {
  bench --kernel vpic --layout aos --particles 32768 \
    --tagg-config "direct_io=on;direct_io_min=1M;aggregate=always;aggregators=2"
  local rc=$? line raw d
  line=$(grep '^tagg: file=.* raw_read_bytes=[1-9][0-9]* raw_read_calls=16 ' out.txt)
  raw=$(sed -n 's/.* raw_read_bytes=\([0-9]*\) .*/\1/p' <<< "$line")
  d=$(sed -n 's/.* dio_read_bytes=\([0-9]*\) .*/\1/p' <<< "$line")
  if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "call_rounds: tagg-bench exit $rc"; tail -20 out.txt; return; fi
  if [ -z "$raw" ] || [ "$d" != "$raw" ]; then bad "call_rounds: dio_read_bytes '$d' of raw_read_bytes '$raw' (want all)"; grep '^tagg: file=' out.txt; return; fi
  ok "call_rounds: verified, all $d bytes of the aggregated reads direct"
}
rounds
check auto_ext4 none 2048 "${cols[@]}" --tagg-config "buffer_size=256K;aggregate=always;aggregators=1"
check off none 2048 "${cols[@]}" --tagg-config "direct_io=off;buffer_size=256K;aggregate=always;aggregators=1"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -ge 12 ]
