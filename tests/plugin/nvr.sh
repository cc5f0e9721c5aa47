#!/usr/bin/env bash
# destination=nvr end to end (node-local subfiles, README "Layouts"): 4 ranks
# emulating 2 nodes (TOPO), each virtual node with its own node-local
# directory name under NVR; the workload writes in one program and reads back
# in a second one; compared with the MPI-IO driver's file by tagg-fuse + h5diff
# + cmp; the node-ownership rule (no rank touched another node's subfile, and
# an independent access to one is refused); drain at close and by tagg-fuse
# --drain; a missing node-local subfile and an injected out-of-space error
# fail every rank, without a hang.
#   nvr.sh NP WORKLOAD TAGG_FUSE WORKDIR TOPO
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS H5DIFF PLUGIN_DIR
set -u
np=$1 prog=$2 fuse=$3 work=$4 topo=$5
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mkdir -p "$work" && cd "$work" || exit 1
export WORKLOAD_XFER=coll # every dataset transfer collective (see h5_workload.c)
NVR=$work/nvr
CFG="layout=subfiles;destination=nvr;stripe_size=4K;nvr_dir=$NVR;topology=$topo"
rm -rf ref.h5 sf.h5* fused.h5 "$NVR" ./*.out ./*.err.*

(unset HDF5_DRIVER HDF5_VOL_CONNECTOR HDF5_PLUGIN_PATH; run "$np" "$prog" ref.h5 mpio coll) > ref.out 2>&1 \
  && ok "reference run on the MPI-IO driver" || { bad "reference run"; cat ref.out; }

# --- write in one program, read back in another
HDF5_DRIVER_CONFIG="$CFG" TAGG_VERBOSE=1 tagg run "$np" "$prog" sf.h5 default coll > w.out 2>&1
rc=$?
[ $rc = 0 ] && grep -q "failures=0" w.out && ok "write (and read back in the same program) with destination=nvr" \
  || { bad "write with destination=nvr, exit $rc"; tail -40 w.out; }
grep -aq "^destination nvr$" sf.h5 && grep -aq "^format 3$" sf.h5 && ok "the index says format 3, destination nvr" \
  || bad "index: $(head -5 sf.h5)"
host=$(hostname) uid=$(id -u)
for v in 0 1; do
  f=$(ls "$NVR/tagg-$uid/$host.vnode$v/"sf.h5.*.${v}of2 2>/dev/null)
  [ -s "$f" ] && grep -aq "^node $v $host.vnode$v$" sf.h5 && grep -aq " $f$" sf.h5 \
    && ok "subfile $v is in virtual node $v's directory and the index names it" || bad "subfile $v: '$f'; $(ls -R "$NVR")"
done
[ -z "$(ls sf.h5.tagg.*of* 2>/dev/null)" ] && [ -e sf.h5.tagg.meta ] \
  && ok "nothing but the index and the metadata file on the shared side" || bad "shared side: $(ls sf.h5*)"
# the node-ownership rule: every summary has nvr_refused=0 (no rank asked for another node's subfile)
n=$(grep -c "^tagg: file=sf.h5 .*destination=nvr nvr_opens=[0-9]* nvr_refused=0 " w.out)
[ "$n" = 2 ] && ok "write and read phases: no access to another node's subfile (nvr_refused=0)" \
  || { bad "summaries: $(grep '^tagg: file=sf.h5' w.out)"; }
HDF5_DRIVER_CONFIG="$CFG" TAGG_VERBOSE=1 tagg run "$np" "$prog" sf.h5 default coll verify > r.out 2>&1 \
  && grep -q "failures=0" r.out && grep -q "nvr_refused=0 " r.out \
  && ok "a second program reads every element back from the node-local subfiles" || { bad "second program"; tail -30 r.out; }
# a reader that does not name the layout finds it in the index (the topology still names the nodes)
HDF5_DRIVER_CONFIG="topology=$topo" tagg run "$np" "$prog" sf.h5 default coll verify > r2.out 2>&1 && grep -q "failures=0" r2.out \
  && ok "read back with only topology= configured (layout and destination from the index)" || { bad "default-config read"; tail -20 r2.out; }
"$fuse" --check sf.h5 > check.out 2>&1 && grep -q "OK: 2 node-local subfiles" check.out && ok "tagg-fuse --check" \
  || { bad "tagg-fuse --check"; cat check.out; }
"$fuse" sf.h5 fused.h5 > fuse.out 2>&1 && ok "tagg-fuse (metadata merged in)" || { bad "tagg-fuse"; cat fuse.out; }
"$H5DIFF" ref.h5 fused.h5 > diff.out 2>&1 && ok "h5diff: no difference to the MPI-IO file" || { bad "h5diff"; head -20 diff.out; }
cmp -s ref.h5 fused.h5 && ok "fused file byte-identical to the MPI-IO driver's" || bad "fused file differs byte-wise"

# --- the rule is enforced: a reader that transfers independently (half the datasets) touches the
# other node's stripes and is refused, cleanly (exit 1, not the timeout's 124). (Independent writes are
# refused the same way, but a refused fill-value write inside H5Dcreate leaves HDF5's own collective
# calls out of step on the refused rank, as any driver error there would: not run here.)
WORKLOAD_XFER= HDF5_DRIVER_CONFIG="$CFG" timeout 120 env HDF5_PLUGIN_PATH=$PLUGIN_DIR HDF5_DRIVER=tagg \
  "$MPIEXEC" $NPFLAG "$np" ${PREFLAGS:-} "$prog" sf.h5 default coll verify > ind.out 2>&1
rc=$?
[ $rc = 1 ] && grep -q "destination=nvr: rank [0-9]* may not access address .* another node" ind.out \
  && ok "an independent access to another node's subfile is refused with a clear error, no hang" \
  || { bad "independent access: exit $rc"; tail -30 ind.out; }

# --- errors on every rank, no hang: a node-local subfile missing (after a reboot)
cp -a "$NVR" nvr.keep
rm -f "$NVR/tagg-$uid/$host.vnode1/"sf.h5.*
HDF5_DRIVER_CONFIG="$CFG" tagg run "$np" "$each_rank" miss.err "$prog" sf.h5 default coll verify > miss.out 2>&1 \
  && bad "reading with a missing node-local subfile succeeded" \
  || { on_every_rank miss.err "node-local subfile 1 of .* is missing on node $host.vnode1" "$np" \
         && ok "missing node-local subfile: the error names it on every rank" || { bad "missing subfile message"; tail -30 miss.out miss.err.*; }; }
"$fuse" --check sf.h5 > c2.out 2>&1 && bad "--check passed with a subfile missing" \
  || { grep -q "MISSING subfile 1" c2.out && ok "tagg-fuse --check finds it missing" || { bad "--check"; cat c2.out; }; }
rm -rf "$NVR"; mv nvr.keep "$NVR"
# ... and a reader on nodes that do not hold the data (no topology: one node, not vnode0/vnode1)
HDF5_DRIVER_CONFIG="layout=subfiles" tagg run 2 "$each_rank" other.err "$prog" sf.h5 default coll verify > other.out 2>&1 \
  && bad "a reader on other nodes succeeded" \
  || { on_every_rank other.err "is node-local on node .* where none of the 2 ranks runs" 2 \
         && ok "a reader on other nodes: clear error on every rank" || { bad "other nodes message"; tail -20 other.out other.err.*; }; }
# out of space while writing (injected ENOSPC on rank 3's node-local write)
TAGG_FAULT="nvr_write:rank=3" HDF5_DRIVER_CONFIG="$CFG" tagg run "$np" "$each_rank" nospc.err "$prog" nospc.h5 default coll > nospc.out 2>&1
rc=$?
cat nospc.err.* >> nospc.out 2>/dev/null
[ $rc != 0 ] && [ $rc != 124 ] && grep -q "No space left on device (injected" nospc.out \
  && on_every_rank nospc.err "failed on rank 3|No space left" "$np" \
  && ok "out of space on one node: every rank fails, no hang" || { bad "out of space, exit $rc"; tail -30 nospc.out; }

# --- drain by tagg-fuse --drain: an ordinary subfiled file beside the index
"$fuse" --drain sf.h5 > drain.out 2>&1 && ok "tagg-fuse --drain" || { bad "tagg-fuse --drain"; cat drain.out; }
grep -aq "^format 3$" sf.h5 && [ -s sf.h5.tagg.0of2 ] && [ -s sf.h5.tagg.1of2 ] && [ ! -e sf.h5.tagg.meta ] \
  && [ -z "$(find "$NVR" -type f -name 'sf.h5.*')" ] && ok "drained: format 3 index, subfiles beside it, node-local files gone" \
  || bad "after --drain: $(ls sf.h5*) / $(find "$NVR" -type f -name 'sf.h5.*')"
rm -f fused.h5
"$fuse" --check sf.h5 > /dev/null 2>&1 && "$fuse" sf.h5 fused.h5 > /dev/null 2>&1 && "$H5DIFF" ref.h5 fused.h5 > /dev/null 2>&1 \
  && cmp -s ref.h5 fused.h5 && ok "drained file: --check, fuse, h5diff and cmp against MPI-IO" || bad "drained file differs"
tagg run 2 "$prog" sf.h5 default coll verify > d2.out 2>&1 && grep -q "failures=0" d2.out \
  && ok "drained file read back through tagg by 2 ranks on any node" || { bad "drained read-back"; tail -20 d2.out; }

# --- drain at close (drain=close): the writer leaves an ordinary subfiled file
rm -rf sf.h5* fused.h5 "$NVR"
HDF5_DRIVER_CONFIG="$CFG;drain=close" tagg run "$np" "$prog" sf.h5 default coll > dc.out 2>&1 && grep -q "failures=0" dc.out \
  && ok "workload with drain=close" || { bad "drain=close run"; tail -30 dc.out; }
grep -aq "^format 3$" sf.h5 && [ -s sf.h5.tagg.0of2 ] && [ ! -e sf.h5.tagg.meta ] && [ -z "$(find "$NVR" -type f 2>/dev/null)" ] \
  && ok "drain=close: format 3 index, subfiles beside it, node-local files gone" || bad "after drain=close: $(ls sf.h5*)"
"$fuse" sf.h5 fused.h5 > /dev/null 2>&1 && "$H5DIFF" ref.h5 fused.h5 > /dev/null 2>&1 && cmp -s ref.h5 fused.h5 \
  && ok "drain=close file: fuse, h5diff and cmp against MPI-IO" || bad "drain=close file differs"

# --- a later phase drains on request: open read-only with drain=close
rm -rf sf.h5* fused.h5 "$NVR"
HDF5_DRIVER_CONFIG="$CFG" tagg run "$np" "$prog" sf.h5 default coll > w2.out 2>&1 \
  && HDF5_DRIVER_CONFIG="topology=$topo;drain=close" tagg run "$np" "$prog" sf.h5 default coll verify > v2.out 2>&1 \
  && grep -q "failures=0" v2.out && grep -aq "^format 3$" sf.h5 && "$fuse" sf.h5 fused.h5 > /dev/null 2>&1 \
  && cmp -s ref.h5 fused.h5 && ok "a reading phase with drain=close drains the file" || { bad "drain by a reader"; tail -20 v2.out; }

# --- H5Fdelete removes the node-local subfiles too
rm -rf sf.h5* "$NVR"
HDF5_DRIVER_CONFIG="$CFG" tagg run "$np" "$prog" sf.h5 default coll > w3.out 2>&1 \
  && HDF5_DRIVER_CONFIG="$CFG" tagg run "$np" "$prog" sf.h5 default coll delete > del.out 2>&1 \
  && [ -z "$(ls sf.h5* 2>/dev/null)" ] && [ -z "$(find "$NVR" -type f)" ] \
  && ok "H5Fdelete removed the index, the metadata file and the node-local subfiles" \
  || { bad "H5Fdelete left: $(ls sf.h5* 2>/dev/null) $(find "$NVR" -type f)"; tail -20 del.out; }

# --- 2 ranks on the real node split (no topology): one node, one subfile
rm -rf sf2.h5* "$NVR"
(unset HDF5_DRIVER HDF5_VOL_CONNECTOR HDF5_PLUGIN_PATH; run 2 "$prog" ref2.h5 mpio coll) > ref2.out 2>&1
HDF5_DRIVER_CONFIG="layout=subfiles;destination=nvr;nvr_dir=$NVR" tagg run 2 "$prog" sf2.h5 default coll > n2.out 2>&1 \
  && grep -aq "^subfile_count 1$" sf2.h5 && [ -n "$(ls "$NVR/tagg-$uid/$host/"sf2.h5.*.0of1)" ] \
  && "$fuse" sf2.h5 f2.h5 > /dev/null 2>&1 && cmp -s ref2.h5 f2.h5 \
  && ok "2 ranks, real node split: one node-local subfile under the host's name, fused = MPI-IO" || { bad "2 ranks"; tail -20 n2.out; }

# --- configuration errors
HDF5_DRIVER_CONFIG="destination=nvr" tagg run 2 "$prog" bad.h5 default coll > cfg.out 2>&1 \
  && bad "destination=nvr without layout=subfiles accepted" \
  || { grep -q "destination=nvr needs layout=subfiles" cfg.out && ok "destination=nvr without layout=subfiles: clear error" \
       || { bad "config message"; tail -10 cfg.out; }; }

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
