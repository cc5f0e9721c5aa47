# Shared by the plugin test scripts (sourced): PASS/FAIL counting and how
# programs run. Environment (from CTest): MPIEXEC NPFLAG PREFLAGS PLUGIN_DIR.
passed=0 failed=0
ok()  { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
# run N PROG ARGS...: N ranks, at most 300 s
run() { local n=$1; shift; timeout 300 "$MPIEXEC" $NPFLAG "$n" ${PREFLAGS:-} "$@"; }
# tagg CMD...: CMD with the tagg VFD as HDF5's driver
tagg() { HDF5_PLUGIN_PATH=$PLUGIN_DIR HDF5_DRIVER=tagg "$@"; }
# $each_rank PREFIX CMD...: CMD with its stderr in PREFIX.R, R the rank, so
# that one rank's error stack cannot interleave with another's (a command, for
# run: tagg run N $each_rank PREFIX PROG ARGS...)
each_rank="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/each_rank.sh"
# on_every_rank PREFIX PATTERN N: every rank's stderr (PREFIX.0 .. PREFIX.N-1,
# written through $each_rank) matches the extended regular expression
on_every_rank() {
  local r
  for r in $(seq 0 $(($3 - 1))); do grep -Eq "$2" "$1.$r" 2>/dev/null || return 1; done
}
