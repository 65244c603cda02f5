#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the examples the way a user outside this tree does (issue 9, item 8):
# installs BUILD_DIR into OUT_DIR/prefix, then builds examples/adopted_cpp as
# its own CMake project with find_package(qpconnect) and examples/owning_c with
# pkg-config (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig), both against that
# prefix only. The lab tests lab_installed_example_* then run the two programs
# (tests/CMakeLists.txt: this script is their CTest fixture).
#
# Usage: installed_examples.sh BUILD_DIR OUT_DIR
# Leaves OUT_DIR/cpp/example_adopted_cpp and OUT_DIR/c/example_owning_c.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
prefix=$out/prefix
fail() {
  echo "installed_examples: FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$prefix" >"$out/install.log" 2>&1 ||
  { cat "$out/install.log" >&2; fail "cmake --install $build"; }
libdir=$prefix/lib
[[ -d $libdir/pkgconfig ]] || libdir=$(dirname "$(find "$prefix" -name qpconnect.pc | head -1)")/..

# C++: find_package(qpconnect) from the prefix, nothing from the tree.
cmake -S "$src/examples/adopted_cpp" -B "$out/cpp" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/cpp.log" 2>&1 &&
  cmake --build "$out/cpp" -j 2 >>"$out/cpp.log" 2>&1 ||
  { cat "$out/cpp.log" >&2; fail "C++ example against the installed package"; }

# C: pkg-config's qpconnect.pc from the prefix.
PKG_CONFIG_PATH="$libdir/pkgconfig" cmake -S "$src/examples/owning_c" -B "$out/c" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/c.log" 2>&1 &&
  cmake --build "$out/c" -j 2 >>"$out/c.log" 2>&1 ||
  { cat "$out/c.log" >&2; fail "C example against pkg-config"; }

for bin in "$out/cpp/example_adopted_cpp" "$out/c/example_owning_c"; do
  [[ -x $bin ]] || fail "$bin was not built"
  # libqpconnect.so.N resolves from the prefix, not from the build tree.
  resolved=$(LD_LIBRARY_PATH="$libdir" ldd "$bin" | awk '/libqpconnect\.so/ {print $3}')
  [[ $resolved == "$prefix"/* ]] ||
    fail "$bin resolves libqpconnect from '${resolved:-nowhere}', not from $prefix"
done
echo "installed_examples: built against $prefix: $out/cpp/example_adopted_cpp $out/c/example_owning_c"
