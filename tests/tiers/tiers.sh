#!/usr/bin/env bash
# Memory tiers: running out of space, forced and unavailable tiers, failure in
# the middle of a write (2 ranks).
#   tiers.sh NP TEST_TIERS WORKDIR
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS PLUGIN_DIR SRC
# What tagg does when a tier is out of space (README, "Memory tiers"):
#   - aggr_tier=auto: the node whose allocation failed leaves the tier out and
#     the model's next tier is used (summary: tier=DRAM tier_fallback=NVR);
#   - a forced tier (aggr_tier=nvr...) or no tier left: the first collective write fails on every
#     rank with the reason, and files written before are untouched.
set -u
np=$1 prog=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
run() { HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 120 "$MPIEXEC" $NPFLAG "$np" ${PREFLAGS:-} "$prog" "$@"; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
check() { # name, expect-rc, command...
  local name=$1 want=$2; shift 2
  rm -f sum.txt
  run "$@" > out.txt 2> err.txt
  local rc=$?
  if [ $rc = "$want" ] && grep -q "RESULT ok" out.txt; then ok "$name"; else bad "$name (exit $rc)"; tail -15 err.txt; cat out.txt; fi
}
B="buffers=2;buffer_size=256K;block=4M;aggregate=always;summary=$work/sum.txt" # aggregated (1.5 MiB runs per rank would go direct)
mkdir -p nvr

# 1. A file written and read on DRAM: the one that must survive the failures below.
check "DRAM write" 0 write keep.h5 "$B;aggr_tier=auto;nvr_dir=$work/nvr" ok
t=$(field tier < sum.txt); [ "$t" = DRAM ] && ok "auto chooses DRAM here (tier=$t)" || bad "tier=$t, want DRAM"

# 2. The model prefers NVR (a tier file says NVR is fastest); NVR runs out of
#    space on rank 1 while allocating (posix_fallocate -> ENOSPC, injected):
#    fall back to DRAM, data written and read back.
TAGG_FAULT="nvr_alloc:rank=1" check "NVR full on rank 1 -> fallback write" 0 write fb.h5 \
  "$B;tiers=$SRC/nvr-first.tiers;nvr_dir=$work/nvr" ok
line=$(head -1 sum.txt)
[ "$(echo "$line" | field tier)" = DRAM ] && [ "$(echo "$line" | field tier_fallback)" = NVR ] \
  && ok "summary names the fallback: $(echo "$line" | grep -o 'tier=.*')" || bad "summary: $line"
check "fallback file reads back" 0 read fb.h5 "$B" ok
check "without the fault the model's NVR is used" 0 write nvr.h5 "$B;tiers=$SRC/nvr-first.tiers;nvr_dir=$work/nvr" ok
[ "$(field tier < sum.txt)" = NVR ] && ok "tier=NVR" || bad "tier: $(cat sum.txt)"

# 3. No tier left after the fallback (DRAM capped below the footprint): clean failure everywhere.
TAGG_FAULT="nvr_alloc:rank=1" check "NVR full, DRAM capped: fails on every rank" 0 write none.h5 \
  "$B;tiers=$SRC/nvr-first.tiers;nvr_dir=$work/nvr;dram_capacity=256K" "fail:no memory tier can hold"

# 4. Forced NVR on a real small tmpfs: ENOSPC when the buffers are made, every rank fails, no fallback.
mkdir -p small
if mount -t tmpfs -o size=1M tmpfs small 2> /dev/null; then
  # 2 ranks x 2 buffers x 1 MiB = 4 MiB asked of a 1 MiB directory
  check "forced NVR on a 1 MiB tmpfs: fails on every rank" 0 write full.h5 \
    "$B;buffer_size=1M;aggr_tier=nvr;nvr_dir=$work/small" "fail:No space left on device"
  check "auto with NVR required (persistency=job) on the small tmpfs: no tier" 0 write full2.h5 \
    "$B;buffer_size=1M;persistency=job;nvr_dir=$work/small" "fail:NVR: capacity"
  left=$(ls small | wc -l); [ "$left" = 0 ] && ok "nothing left in the tmpfs" || bad "files left: $(ls small)"
  umount small
else
  echo "SKIP: cannot mount a tmpfs here (not root?): the real-ENOSPC cases are covered by fault injection above"
fi

# 5. Forced tiers that cannot be used.
check "forced HBM without HBM" 0 write hbm.h5 "$B;aggr_tier=hbm" "fail:no high-bandwidth memory"
check "forced DRAM with persistency=job" 0 write pj.h5 "$B;aggr_tier=dram;persistency=job" "fail:keeps no data for the job"
check "bad tier file" 0 write bt.h5 "$B;tiers=$work/nope.tiers" "fail:tiers:"
check "NVR directory missing" 0 write nd.h5 "$B;aggr_tier=nvr;nvr_dir=$work/does-not-exist" "fail:is not writable"

# 6. The test tier fails in the middle of a collective write: every rank fails
#    that call, the dataset written before is intact.
check "test tier: memWrite fails mid-write on rank 1" 0 midwrite mid.h5 "$B;aggr_tier=test" "fail:injected by TAGG_FAULT"
grep -q "tier=TEST" sum.txt && ok "summary says tier=TEST" || bad "summary: $(cat sum.txt)"
TAGG_FAULT="tier_alloc:rank=0" check "test tier: alloc fails on rank 0 (forced: no fallback)" 0 write ta.h5 \
  "$B;aggr_tier=test" "fail:injected by TAGG_FAULT"

# 7. The first file survived all of it.
check "DRAM file still reads back" 0 read keep.h5 "$B" ok
left=$(ls nvr | wc -l); [ "$left" = 0 ] && ok "no NVR buffer file left" || bad "NVR files left: $(ls nvr)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
