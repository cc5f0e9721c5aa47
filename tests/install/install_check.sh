#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then builds a consumer program
# with find_package(tagg) and with pkg-config, and runs both.
#   install_check.sh BUILD_DIR WORK_DIR SOURCE_DIR
set -eu
build=$1 work=$2 src=$3
rm -rf "$work" && mkdir -p "$work/proj"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cp "$src/consumer.c" "$work/proj/" && cp "$src/CMakeLists.txt.in" "$work/proj/CMakeLists.txt"
CC=${CC:-cc} cmake -S "$work/proj" -B "$work/proj/build" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/proj/build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/proj/build/consumer"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --exists tagg
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs --static tagg)
mpicc -std=c11 "$src/consumer.c" -I"$work/prefix/include/tagg/core" $flags -o "$work/consumer-pc"
"$work/consumer-pc"
plugindir=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --variable=plugindir tagg)
test -f "$plugindir/libtagg_vfd.so" && test -f "$plugindir/libtagg_vol.so"
echo "install check: find_package and pkg-config consumers built and ran; plugins in $plugindir"
