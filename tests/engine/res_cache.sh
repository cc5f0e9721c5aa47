#!/usr/bin/env bash
# The engine's cache of resources (machine description, aggregation buffers)
# keeps up to 4 sets per process, one per key: files of two configurations
# alternating in one process make each set once (records: setup 2 on the
# first file of each, 0 afterwards); five configurations cycling through the
# 4 slots give up the least recently used set every time (setup 2 on every
# file), each time on every rank alike, with the data verified by tagg-bench.
# 4 ranks. Environment: MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR PYTHON.
set -u
work=$1; mkdir -p "$work"; cd "$work" || exit 1
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
bench() { # reps variants... (NAME=BUFFER_SIZE): aggregated S3D blocks, each variant recording to NAME.jsonl
  local reps=$1 names="" args=(); shift
  rm -f ./*.jsonl
  for v in "$@"; do
    names+="${names:+,}${v%%=*}"
    args+=(--extra-tagg "${v%%=*}=aggregate=always;buffer_size=${v#*=};record=$work/${v%%=*}.jsonl")
  done
  HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 300 "$MPIEXEC" $NPFLAG 4 ${PREFLAGS:-} "$BENCH" --reps "$reps" --rotate 0 --dir "$work" \
    --variants "$names" "${args[@]}" --kernel s3d --grid 8 8 8 > out.txt 2>&1
}
# (--rotate 0: the order of the list in every repetition, so that five sets cycle through 4 slots)
# setups NAME: the setup field of each record of NAME, in order
setups() { "$PYTHON" -c 'import json, sys; print(" ".join(str(json.loads(l)["setup"]) for l in open(sys.argv[1])))' "$1.jsonl"; }

# two configurations alternating: each set made once (its first write), then found in the cache
if bench 3 b1=1M b4=4M && [ "$(grep -c ' ok$' out.txt)" = 2 ]; then
  s1=$(setups b1) s4=$(setups b4)
  # each repetition: one write and one read call per file
  if [ "$s1" = "2 0 0 0 0 0" ] && [ "$s4" = "2 0 0 0 0 0" ]; then ok "two configurations alternating: setups b1 '$s1', b4 '$s4'"
  else bad "two configurations alternating: setups b1 '$s1', b4 '$s4' (want '2 0 0 0 0 0' each)"; fi
else bad "two configurations: tagg-bench failed"; tail -20 out.txt; fi

# five configurations cycling through four slots: the least recently used set goes every time
if bench 2 c1=1M c2=2M c3=3M c4=4M c5=5M && [ "$(grep -c ' ok$' out.txt)" = 5 ]; then
  all=$(for c in c1 c2 c3 c4 c5; do setups $c; done | tr '\n' ' ')
  if [ "$all" = "2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 " ]; then ok "five configurations, four slots: every file makes its set ($all)"
  else bad "five configurations: setups '$all' (want '2 0' per file)"; fi
else bad "five configurations: tagg-bench failed"; tail -20 out.txt; fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
