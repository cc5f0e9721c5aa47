#!/usr/bin/env bash
# MA-TAPIOCA Table 7 end to end (seed 002, section 4.3): the S3D-IO kernel with
# 3 aggregation buffers of 16 MiB, HBM capacity capped to 32 MiB, then DRAM
# capped too; the tier the model chooses must move from HBM to DRAM to NVR, the
# data must be byte-exact in every case (against the MPI-IO driver's file),
# and the tagg summary must name the tier. HBM is emulated (hbm_emulate=1):
# this machine has none.
#   table7.sh NP WORKDIR
# Environment (from CTest): MPIEXEC NPFLAG PREFLAGS BENCH PLUGIN_DIR H5DUMP H5DIFF
set -u
np=$1 work=$2
rm -rf "$work" && mkdir -p "$work/nvr" && cd "$work" || exit 1
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
C="buffers=3;buffer_size=16M;hbm_emulate=1;nvr_dir=$work/nvr;summary=$work/sum.txt"
HDF5_PLUGIN_PATH=$PLUGIN_DIR timeout 600 "$MPIEXEC" $NPFLAG "$np" ${PREFLAGS:-} "$BENCH" --kernel s3d \
  --grid 32 32 16 --reps 1 --dir "$work" --keep --variants mpiio-coll \
  --extra-tagg "run1=$C" --extra-tagg "run2=$C;hbm_capacity=32M" \
  --extra-tagg "run3=$C;hbm_capacity=32M;dram_capacity=32M" > out.txt 2> err.txt
rc=$?
cat out.txt
[ $rc = 0 ] && ok "tagg-bench exit 0" || { bad "tagg-bench exit $rc"; tail -20 err.txt; }
ref=$(ls tagg-bench-*-mpiio-coll.h5 2> /dev/null)
[ -n "$ref" ] && "$H5DUMP" -b LE -d /state -o ref.bin "$ref" > /dev/null 2>&1 || bad "no reference file"
for run in run1:HBM run2:DRAM run3:NVR; do
  name=${run%%:*} want=${run##*:}
  grep -q "^$name .* ok$" out.txt && ok "$name: tagg-bench verified the read-back" || bad "$name: not verified"
  f=$(ls tagg-bench-*-$name.h5 2> /dev/null)
  "$H5DUMP" -b LE -d /state -o $name.bin "$f" > /dev/null 2>&1 && cmp -s ref.bin $name.bin \
    && ok "$name: dataset bytes identical to the MPI-IO driver's ($(stat -c %s $name.bin) bytes)" \
    || bad "$name: dataset differs from the MPI-IO driver's"
  "$H5DIFF" "$ref" "$f" > /dev/null 2>&1 && ok "$name: h5diff finds no difference" || bad "$name: h5diff"
  lines=$(grep "file=tagg-bench-[0-9]*-$name.h5 " sum.txt)
  n=$(echo "$lines" | grep -c " tier=$want\b")
  echo "$lines" | sed 's/raw_write_bytes.*read_extents=[0-9]* /... /'
  [ "$n" = 2 ] && ok "$name: summary of the write and the read says tier=$want" || bad "$name: want tier=$want: $lines"
done
left=$(ls nvr | wc -l); [ "$left" = 0 ] && ok "no NVR buffer file left" || bad "NVR files left"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
