#!/usr/bin/env bash
# tagg set-up: installs what is missing (system packages, parallel HDF5 1.14.5,
# a Python venv with mpi4py + parallel h5py + pytest, and with TAGG_NETCDF=1
# netCDF-C with parallel netCDF-4 on that HDF5), then configures and builds tagg.
# Idempotent: every step checks a stamp or probe first and does nothing when done.
#
#   scripts/setup.sh            set up and build
#   scripts/setup.sh --env      print the environment lines (used by scripts/tagg.sh)
#
# Variables: TAGG_CACHE (default ~/.cache/tagg), HDF5_ROOT (an existing parallel
# HDF5 >= 1.14; else h5pcc on PATH; else built from Debian's source package),
# TAGG_BUILD_DIR (default <repo>/build), TAGG_SANITIZE=1 (ASan+UBSan build in build-asan),
# TAGG_NETCDF=1 (also build netCDF-C for the netCDF tests; scripts/tagg.sh test sets it).
set -Eeuo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TAGG_CACHE=${TAGG_CACHE:-$HOME/.cache/tagg}
HDF5_VERSION=1.14.5
NETCDF_VERSION=4.9.3
PYTAG=$(python3 -c 'import sys; print("py%d.%d" % sys.version_info[:2])')
STEP="start"
LOG_DIR="$TAGG_CACHE/logs"
mkdir -p "$TAGG_CACHE" "$LOG_DIR"

step() { STEP="$1"; printf '==> [%s] %s\n' "$1" "$2"; }
die() {
  printf '\ntagg setup: step "%s" failed: %s\n' "$STEP" "$1" >&2
  [ -n "${2:-}" ] && printf 'What to do: %s\n' "$2" >&2
  exit 1
}
trap 'die "command failed at line $LINENO: $BASH_COMMAND" "read the log named above (under $LOG_DIR), fix the cause and run the same command again; finished steps are not redone"' ERR

# Runs a long command with its output in a log file, printing a dot every 10 s.
run_logged() {
  local log="$LOG_DIR/$1.log"; shift
  printf '    (log: %s)\n' "$log"
  ( "$@" ) >"$log" 2>&1 &
  local pid=$! t=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 10; t=$((t + 10)); printf '    ... %s s\n' "$t"
  done
  if ! wait "$pid"; then
    tail -n 30 "$log" >&2
    die "see $log (last lines above)" "fix the cause shown in the log and run the same command again"
  fi
}

# ---------------------------------------------------------------- packages
SYS_PKGS="mpich libmpich-dev libcmocka-dev libmemkind-dev libhwloc-dev zlib1g-dev libblosc-dev liblz4-dev libzstd-dev pkg-config ninja-build cmake gcc g++ make dpkg-dev xz-utils python3-dev python3-venv strace"
APT_UPDATED=0
apt_update_once() {
  if [ "$APT_UPDATED" = 0 ]; then run_logged apt-update apt-get update; APT_UPDATED=1; fi
}
step_packages() {
  step packages "system packages (MPICH, CMocka, memkind, hwloc, zlib, c-blosc, LZ4, Zstandard, Ninja)"
  local missing=""
  for p in $SYS_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  if [ -z "$missing" ]; then echo "    all present"; return; fi
  echo "    missing:$missing"
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "packages missing:$missing" "ask an administrator to run: apt-get install -y$missing"
    SUDO=sudo
  else SUDO=""; fi
  APT_UPDATED=0
  run_logged apt-update $SUDO apt-get update
  APT_UPDATED=1
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive run_logged apt-install $SUDO apt-get install -y --no-install-recommends $missing
}

# ---------------------------------------------------------------- HDF5
hdf5_ok() { # $1 = prefix; true when it holds a parallel HDF5 >= 1.14
  local h="$1/include/H5pubconf.h"
  [ -f "$h" ] || return 1
  grep -q '#define H5_HAVE_PARALLEL 1' "$h" || return 1
  local v; v=$(sed -n 's/^#define H5_VERSION "\(.*\)"/\1/p' "$h")
  [ "$(printf '%s\n1.14.0\n' "$v" | sort -V | head -n1)" = "1.14.0" ]
}
step_hdf5() {
  step hdf5 "parallel HDF5 >= 1.14"
  if [ -n "${HDF5_ROOT:-}" ]; then
    hdf5_ok "$HDF5_ROOT" || die "HDF5_ROOT=$HDF5_ROOT is not a parallel HDF5 >= 1.14" "point HDF5_ROOT at a parallel HDF5 1.14 install, or unset it to build one"
    echo "    using HDF5_ROOT=$HDF5_ROOT"; return
  fi
  if command -v h5pcc >/dev/null 2>&1; then
    local p; p=$(cd "$(dirname "$(command -v h5pcc)")/.." && pwd)
    if hdf5_ok "$p"; then HDF5_ROOT=$p; echo "    using h5pcc's HDF5 at $p"; return; fi
  fi
  HDF5_ROOT="$TAGG_CACHE/hdf5-$HDF5_VERSION"
  if [ -f "$HDF5_ROOT/.tagg-stamp" ] && hdf5_ok "$HDF5_ROOT"; then echo "    cached at $HDF5_ROOT"; return; fi
  local src="$TAGG_CACHE/src"
  mkdir -p "$src"
  local tarball; tarball=$(ls "$src"/hdf5_${HDF5_VERSION}*.orig.tar.* 2>/dev/null | head -n1 || true)
  if [ -z "$tarball" ]; then
    echo "    fetching the source package hdf5/trixie"
    local list=/etc/apt/sources.list.d/tagg-trixie-src.sources
    if [ ! -f "$list" ]; then
      local uri; uri=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n1 || true)
      [ -n "$uri" ] || uri=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p' /etc/apt/sources.list 2>/dev/null | grep -v security | head -n1 || true)
      [ -n "$uri" ] || die "no Debian mirror found in apt's sources" "download hdf5-$HDF5_VERSION source into $src, or set HDF5_ROOT"
      printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" > "$list"
    fi
    run_logged apt-update-src apt-get update
    (cd "$src" && run_logged hdf5-source apt-get source --download-only hdf5/trixie)
    tarball=$(ls "$src"/hdf5_${HDF5_VERSION}*.orig.tar.* 2>/dev/null | head -n1 || true)
    [ -n "$tarball" ] || die "apt-get source gave no hdf5_${HDF5_VERSION} tarball" "check $LOG_DIR/hdf5-source.log"
  fi
  rm -rf "$src/hdf5-build" "$src/hdf5-tree"; mkdir -p "$src/hdf5-tree"
  tar -xf "$tarball" -C "$src/hdf5-tree" --strip-components=1
  echo "    building HDF5 $HDF5_VERSION (about 2-4 minutes on 2 cores)"
  run_logged hdf5-configure cmake -S "$src/hdf5-tree" -B "$src/hdf5-build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=mpicc \
    -DHDF5_ENABLE_PARALLEL=ON -DHDF5_ENABLE_SUBFILING_VFD=ON \
    -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DBUILD_TESTING=OFF \
    -DHDF5_BUILD_EXAMPLES=OFF -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF \
    -DHDF5_BUILD_JAVA=OFF -DHDF5_BUILD_HL_LIB=ON -DHDF5_BUILD_TOOLS=ON \
    -DHDF5_ENABLE_Z_LIB_SUPPORT=ON -DCMAKE_INSTALL_PREFIX="$HDF5_ROOT"
  run_logged hdf5-build ninja -C "$src/hdf5-build" install
  hdf5_ok "$HDF5_ROOT" || die "HDF5 installed but $HDF5_ROOT/include/H5pubconf.h is not parallel 1.14" "remove $HDF5_ROOT and retry"
  touch "$HDF5_ROOT/.tagg-stamp"
  rm -rf "$src/hdf5-build"
}

# ---------------------------------------------------------------- Python
step_venv() {
  step python "venv with mpi4py, parallel h5py ($HDF5_ROOT), numpy, pytest, pytest-mpi, scikit-learn"
  VENV="$TAGG_CACHE/venv-$PYTAG-hdf5-$(echo "$HDF5_ROOT" | cksum | cut -d' ' -f1)"
  # pytest-mpi (h5py's MPI tests) came later: a venv stamped before it gets it added
  if [ -f "$VENV/.tagg-stamp" ] && "$VENV/bin/python" -c "import pytest_mpi" 2>/dev/null; then
    echo "    cached at $VENV"; return
  fi
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || die "python3 -m venv failed" "install python3-venv"
  local pip="$VENV/bin/pip"
  run_logged pip-base "$pip" install --disable-pip-version-check "setuptools>=77" "Cython>=3" pkgconfig numpy pytest pytest-mpi wheel scikit-learn
  # Debian's MPICH lacks the libmpi.so.12 name the mpi4py wheel wants: build from source.
  # Low optimisation keeps the compiler's memory in bounds (one -O3 -g process grew past 21 GB).
  if ! "$VENV/bin/python" -c "import mpi4py" 2>/dev/null; then
    echo "    building mpi4py from source (about 2 minutes)"
    CFLAGS="-O1 -g0" run_logged mpi4py "$pip" install --disable-pip-version-check --no-binary=mpi4py --no-build-isolation mpi4py
  fi
  if ! "$VENV/bin/python" -c "import h5py, sys; sys.exit(0 if h5py.get_config().mpi else 1)" 2>/dev/null; then
    echo "    building parallel h5py from source (about 2 minutes)"
    CC=mpicc HDF5_MPI=ON HDF5_DIR="$HDF5_ROOT" CFLAGS="-O1 -g0" LDFLAGS="-Wl,-rpath,$HDF5_ROOT/lib" \
      run_logged h5py "$pip" install --disable-pip-version-check --no-binary=h5py --no-build-isolation h5py
  fi
  LD_LIBRARY_PATH="$HDF5_ROOT/lib" "$VENV/bin/python" -c "import h5py, sys; print('    h5py', h5py.version.version, 'hdf5', h5py.version.hdf5_version, 'mpi', h5py.get_config().mpi); sys.exit(0 if h5py.get_config().mpi else 1)" \
    || die "h5py is not built for MPI" "remove $VENV and run again"
  touch "$VENV/.tagg-stamp"
}
# scikit-learn for tagg-tune (fitting tuning models); a venv made before it was
# needed gets it here.
step_venv_tune() {
  if "$VENV/bin/python" -c "import sklearn" 2>/dev/null; then return; fi
  step python "scikit-learn in the venv (tagg-tune)"
  run_logged sklearn "$VENV/bin/pip" install --disable-pip-version-check scikit-learn
}

# ---------------------------------------------------------------- netCDF (TAGG_NETCDF=1)
# netCDF-C from Debian's trixie source package, parallel netCDF-4 on the HDF5
# above, for the tests that check netCDF users (tests/netcdf). Only the
# library: no DAP, NCZarr, plugins, utilities or tests (under a minute).
NETCDF_PKGS="libcurl4-openssl-dev libxml2-dev"
step_netcdf() {
  NETCDF_ROOT=""
  [ "${TAGG_NETCDF:-0}" = 1 ] || return 0
  NETCDF_ROOT="$TAGG_CACHE/netcdf-$NETCDF_VERSION-$(echo "$HDF5_ROOT" | cksum | cut -d' ' -f1)"
  step netcdf "netCDF-C $NETCDF_VERSION with parallel netCDF-4 ($HDF5_ROOT)"
  if [ -f "$NETCDF_ROOT/.tagg-stamp" ] && [ -f "$NETCDF_ROOT/include/netcdf_par.h" ]; then
    echo "    cached at $NETCDF_ROOT"; return
  fi
  local missing="" SUDO=""
  for p in $NETCDF_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "    missing:$missing"
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null || die "packages missing:$missing" "ask an administrator to run: apt-get install -y$missing"
      SUDO=sudo
    fi
    run_logged apt-update $SUDO apt-get update
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive run_logged apt-install-netcdf $SUDO apt-get install -y --no-install-recommends $missing
  fi
  local src="$TAGG_CACHE/src"
  mkdir -p "$src"
  local tarball; tarball=$(ls "$src"/netcdf_${NETCDF_VERSION}*.orig.tar.* 2>/dev/null | head -n1 || true)
  if [ -z "$tarball" ]; then
    [ -f /etc/apt/sources.list.d/tagg-trixie-src.sources ] \
      || die "no trixie deb-src entry (the hdf5 step writes it when it builds HDF5)" "download netcdf-c-$NETCDF_VERSION's source as $src/netcdf_$NETCDF_VERSION.orig.tar.gz"
    echo "    fetching the source package netcdf/trixie"
    run_logged apt-update-src apt-get update
    (cd "$src" && run_logged netcdf-source apt-get source --download-only --tar-only netcdf/trixie)
    tarball=$(ls "$src"/netcdf_${NETCDF_VERSION}*.orig.tar.* 2>/dev/null | head -n1 || true)
    [ -n "$tarball" ] || die "apt-get source gave no netcdf_${NETCDF_VERSION} tarball" "check $LOG_DIR/netcdf-source.log"
  fi
  rm -rf "$src/netcdf-build" "$src/netcdf-tree"; mkdir -p "$src/netcdf-tree"
  tar -xf "$tarball" -C "$src/netcdf-tree" --strip-components=1
  echo "    building netCDF-C $NETCDF_VERSION (under a minute on 2 cores)"
  CC=mpicc run_logged netcdf-configure cmake -S "$src/netcdf-tree" -B "$src/netcdf-build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DHDF5_ROOT="$HDF5_ROOT" -DCMAKE_PREFIX_PATH="$HDF5_ROOT" \
    -DNETCDF_ENABLE_PARALLEL4=ON -DNETCDF_ENABLE_DAP=OFF -DNETCDF_ENABLE_BYTERANGE=OFF \
    -DNETCDF_ENABLE_NCZARR=OFF -DNETCDF_ENABLE_TESTS=OFF -DNETCDF_ENABLE_PLUGINS=OFF \
    -DNETCDF_ENABLE_EXAMPLES=OFF -DNETCDF_BUILD_UTILITIES=OFF -DNETCDF_ENABLE_DOXYGEN=OFF \
    -DCMAKE_INSTALL_RPATH="$HDF5_ROOT/lib" -DCMAKE_INSTALL_PREFIX="$NETCDF_ROOT"
  run_logged netcdf-build ninja -C "$src/netcdf-build" install
  grep -q '#define NC_HAS_PARALLEL4 1' "$NETCDF_ROOT/include/netcdf_meta.h" 2>/dev/null \
    || die "netCDF installed in $NETCDF_ROOT without parallel netCDF-4" "read $LOG_DIR/netcdf-configure.log; remove $NETCDF_ROOT and retry"
  touch "$NETCDF_ROOT/.tagg-stamp"
  rm -rf "$src/netcdf-build" "$src/netcdf-tree"
}

# ---------------------------------------------------------------- tagg
step_build() {
  BUILD=${TAGG_BUILD_DIR:-$REPO/build}
  local extra=()
  if [ "${TAGG_SANITIZE:-0}" = 1 ]; then BUILD=${TAGG_BUILD_DIR:-$REPO/build-asan}; extra+=(-DTAGG_SANITIZE=ON); fi
  step build "configure and build tagg in $BUILD"
  [ -n "$NETCDF_ROOT" ] && extra+=(-DTAGG_NETCDF_ROOT="$NETCDF_ROOT")
  if [ ! -f "$BUILD/build.ninja" ]; then
    run_logged tagg-configure cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DHDF5_ROOT="$HDF5_ROOT" -DTAGG_PYTHON="$VENV/bin/python" "${extra[@]}"
  elif [ -n "$NETCDF_ROOT" ] && ! grep -qx "TAGG_NETCDF_ROOT:PATH=$NETCDF_ROOT" "$BUILD/CMakeCache.txt"; then
    run_logged tagg-configure cmake -S "$REPO" -B "$BUILD" -DTAGG_NETCDF_ROOT="$NETCDF_ROOT"
  fi
  run_logged tagg-build cmake --build "$BUILD"
  echo "    built: $BUILD"
}

write_env() {
  cat > "$TAGG_CACHE/env.sh" <<ENV
# generated by scripts/setup.sh
HDF5_ROOT="$HDF5_ROOT"
VENV="$VENV"
BUILD="$BUILD"
NETCDF_ROOT="$NETCDF_ROOT"
ENV
}

main() {
  step_packages
  step_hdf5
  step_venv
  step_venv_tune
  step_netcdf
  step_build
  write_env
  STEP=done; echo "==> set-up complete (HDF5 $HDF5_ROOT, venv $VENV, build $BUILD)"
}
main "$@"
