#!/usr/bin/env bash
# A client that serialises one node's writes into one file (fs_client, FUSE by
# the mount table): column blocks on 4 ranks with 32 KiB buffers, where the
# model's count gives several aggregators. fs_client=parallel: more than one
# aggregator on the node for writes; serial: one per node for writes (one on a
# single node; one on each of two virtual nodes with a topology file), reads
# as before; the same with a single subfile (one file) but not with two
# subfiles (their reads planned by the model, direct or aggregated); auto: one
# per node for direct writes of interleaved runs into a local disk on a rotational device. Every run reads back what it wrote (tagg-bench verifies byte for
# byte). Environment: MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR; $2: the
# two-node topology file.
set -u
work=$1 topo=$2; mkdir -p "$work"; cd "$work" || exit 1
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
# the domains of the first write and read call whose plan the verbose lines print
domains() { grep -m1 "tagg: $1 call range=" out.txt | sed -n 's/.* domains=\([0-9]*\) .*aggregators=\([0-9,]*\) .*/\1 \2/p'; }
run() { # name want-write-domains want-read-domains(min) tagg-config
  local name=$1 ww=$2 rmin=$3 cfg=$4
  TAGG_VERBOSE=2 HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG 4 ${PREFLAGS:-} "$BENCH" --reps 1 \
    --dir "$work" --kernel columns --cols 1024 --rows 64 --variants tagg-shared \
    --tagg-config "buffer_size=32K;$cfg" > out.txt 2>&1 </dev/null
  local rc=$? w r
  w=$(domains write) r=$(domains read)
  if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "$name: tagg-bench exit $rc"; cat out.txt; return; fi
  [ -z "$r" ] && grep -q "tagg: read call not aggregated" out.txt && r="0 direct"
  if [ "${w%% *}" = "$ww" ] && [ "${r%% *}" -ge "$rmin" ] 2>/dev/null; then
    ok "$name: write domains/aggregators $w, read $r, data verified"
  else bad "$name: write domains/aggregators '$w' (want $ww), read '$r' (want >= $rmin)"; grep "call range" out.txt; fi
  echo "$w" > "last-$name"
}
run parallel 2 2 "fs_client=parallel"
run serial 1 2 "fs_client=serial"
run serial_two_nodes 2 2 "fs_client=serial;topology=$topo"
# the two aggregators on different virtual nodes (ranks 0-1, 2-3)
a=$(cut -d' ' -f2 last-serial_two_nodes)
if [ $(( ${a%,*} / 2 )) != $(( ${a#*,} / 2 )) ]; then ok "serial_two_nodes: aggregators $a on both nodes"; else bad "serial_two_nodes: aggregators $a on one node"; fi
# (reads of subfiles: the model's choice either way; the layout reads each
# 64 KiB stripe a rank touches whole to check it, so each rank's 64 runs cost
# 33 stripe reads, priced so since session 31)
# the device (fs_kind.c): direct writes (direct_io=write) with fs_client=auto
# take one aggregator per node on a local disk whose device is rotational
# (sysfs queue/rotational, read here on its own), two elsewhere; buffered
# writes (direct_io=off) two either way (the page cache sorts them)
dev=$(stat -c '%Hd:%Ld' "$work") fstype=$(stat -f -c %T "$work")
rot=$(cat "/sys/dev/block/$dev/queue/rotational" 2>/dev/null ||
      { [ -e "/sys/dev/block/$dev/partition" ] && cat "/sys/dev/block/$dev/../queue/rotational"; } 2>/dev/null)
case "$fstype" in ext2/ext3|xfs|btrfs) ;; *) rot=0 ;; esac
want=2; [ "$rot" = 1 ] && want=1
echo "work directory: $fstype on device $dev, rotational '${rot:-unknown}': $want write aggregator(s) expected"
run rotational_direct $want 2 "direct_io=write;direct_io_min=4K"
run rotational_buffered 2 2 "direct_io=off"
run rotational_parallel 2 2 "direct_io=write;direct_io_min=4K;fs_client=parallel"
# The same rule across files (session 41): a process's first file on such a
# disk is written buffered (direct_io=auto: no sync seen yet), where four
# runs of 1 MiB a rank (column blocks of 1 MiB a row) go direct by cost; its
# later synced files are written direct, where the four ranks' runs take
# turns and one aggregator's rounds cost less. A shape guessed direct in the
# first file must not carry over to them (until session 41 it did, and every
# later file wrote direct). Three files, --fsync: the second and third
# aggregate on a rotational disk, no write is accessed before its plan there;
# elsewhere every write is direct.
synced_files() { # three files of a kernel, --fsync, verbose plans in out.txt; returns tagg-bench's status
  TAGG_VERBOSE=2 HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG 4 ${PREFLAGS:-} "$BENCH" --reps 3 --fsync \
    --dir "$work" --variants tagg-shared "$@" > out.txt 2>&1 </dev/null
}
synced_files --kernel columns --cols 524288 --rows 1
rc=$?
aggr=$(grep -c "tagg: write call range=" out.txt) early=$(grep -c "tagg: write call not aggregated (accessed before" out.txt)
first=$(grep -m1 "tagg: write call" out.txt | grep -c "direct access costs less")
want_aggr=0; [ "$rot" = 1 ] && want_aggr=2
if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "synced_after_buffered: tagg-bench exit $rc"; cat out.txt
elif [ "$first" = 1 ] && [ "$aggr" = "$want_aggr" ] && { [ "$rot" != 1 ] || [ "$early" = 0 ]; }; then
  ok "synced_after_buffered: first file direct by cost, $aggr later write(s) aggregated, $early accessed early, data verified"
else bad "synced_after_buffered: first direct by cost '$first' (want 1), aggregated $aggr (want $want_aggr), accessed early $early"
  grep "write call" out.txt; fi
# Runs of their own (one contiguous 1 MiB a rank): side by side, not in turns,
# on any disk (session 41): every file's write direct.
synced_files --kernel array1d --dist uniform --size 1M
rc=$?
aggr=$(grep -c "tagg: write call range=" out.txt) direct=$(grep -c "tagg: write call not aggregated" out.txt)
if [ $rc != 0 ] || ! grep -q '^tagg-shared .* ok$' out.txt; then bad "own_runs_side_by_side: tagg-bench exit $rc"; cat out.txt
elif [ "$aggr" = 0 ] && [ "$direct" = 3 ]; then ok "own_runs_side_by_side: 3 writes direct, data verified"
else bad "own_runs_side_by_side: $aggr aggregated, $direct direct (want 0 and 3)"; grep "write call" out.txt; fi
run one_subfile 1 0 "fs_client=serial;layout=subfiles;subfiles=1;stripe_size=64K"
run two_subfiles 2 0 "fs_client=serial;layout=subfiles;subfiles=2;stripe_size=64K"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -ge 11 ]
