#!/usr/bin/env bash
# tagg-calibrate --quick on 2 ranks: exit 0, progress shown, a tier file the
# model reads (tagg-model plans with it), positive latency/bandwidth figures, the
# MPI intra-node figures, and the engine runs with tiers=<that file>.
#   calibrate.sh CALIBRATE TAGG_MODEL TEST_TIERS WORKDIR
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS PLUGIN_DIR SRC
set -u
cal=$1 model=$2 prog=$3 work=$4
rm -rf "$work" && mkdir -p "$work/nvr" && cd "$work" || exit 1
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
start=$(date +%s)
timeout 120 "$MPIEXEC" $NPFLAG 2 ${PREFLAGS:-} "$cal" --quick -o m.tiers --nvr-dir "$work/nvr" --target-dir "$work" \
  > out.txt 2> err.txt
rc=$?
cat err.txt
[ $rc = 0 ] && ok "exit 0 in $(( $(date +%s) - start )) s" || bad "exit $rc"
cat m.tiers
grep -q "tier DRAM: measuring" err.txt && grep -q "wrote m.tiers" err.txt && ok "progress shown" || bad "no progress"
grep -q "model's choice" err.txt && ok "model's choice printed: $(grep -o "model's choice.*" err.txt)" || bad "no choice"
"$model" --topology "$SRC/../engine/two-vnodes.topo" --tiers m.tiers --pattern uniform:1M > plan.txt 2>&1 \
  && ok "tagg-model plans with the measured tier file" || { bad "tagg-model rejects it"; cat plan.txt; }
for k in DRAM NVR FS; do
  line=$(grep "^tier $k " m.tiers)
  lat=$(echo "$line" | sed -n 's/.*latency=\([0-9.e+-]*\)s.*/\1/p')
  bw=$(echo "$line" | sed -n 's/.*bandwidth=\([0-9.e+-]*\).*/\1/p')
  if [ -n "$line" ] && awk "BEGIN{exit !($lat > 0 && $bw > 0)}"; then ok "$k: latency ${lat}s > 0, bandwidth $bw > 0"
  else bad "$k: '$line'"; fi
done
[ "$(grep -c '^request [0-9]* latency=[0-9.e+-]*s bandwidth=[0-9.e+-]*B/s ranks=2$' m.tiers)" = 4 ] \
  && ok "the target's cost of 4 request sizes, both ranks writing together (request lines, ranks=2)" || bad "no request lines: $(grep request m.tiers)"
[ "$(grep -c '^read_request [0-9]* latency=[0-9.e+-]*s bandwidth=[0-9.e+-]*B/s ranks=2$' m.tiers)" = 4 ] \
  && ok "the same for reads (read_request lines)" || bad "no read_request lines: $(grep read_request m.tiers)"
alone=$(sed -n 's/^read_alone bandwidth=\([0-9.e+-]*\)B\/s$/\1/p' m.tiers)
[ "$(grep -c '^read_alone ' m.tiers)" = 1 ] && [ -n "$alone" ] && awk "BEGIN{exit !($alone > 0)}" \
  && grep -q "target read alone (one rank" err.txt \
  && ok "one rank reading alone (read_alone bandwidth=${alone}B/s), reported next to the ranks together" \
  || bad "no read_alone line: '$(grep read_alone m.tiers)'"
grep -q "^# mpi intra-node latency=[0-9.e+-]*s bandwidth=" m.tiers && ok "MPI intra-node figures" || bad "no MPI figures"
grep -q "tier HBM" err.txt && ok "HBM reported (measured or unavailable with the reason)" || bad "HBM not reported"
HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 120 "$MPIEXEC" $NPFLAG 2 ${PREFLAGS:-} "$prog" write w.h5 \
  "buffers=2;buffer_size=256K;block=4M;tiers=$work/m.tiers;nvr_dir=$work/nvr;summary=$work/sum.txt" ok > run.txt 2>&1 \
  && grep -q "tier=DRAM" sum.txt && ok "engine with tiers=m.tiers: $(grep -o 'tier=.*' sum.txt)" \
  || { bad "engine with the measured tiers"; cat run.txt sum.txt; }
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
