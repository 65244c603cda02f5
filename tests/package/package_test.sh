#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a build tree into a temporary prefix and checks what a program
# embedding qpconnect gets from it (no RDMA device needed):
#   - libqpconnect.so carries the SONAME libqpconnect.so.<major>;
#   - a C++ consumer (find_package(qpconnect), CONSUMER_SOURCE_DIR) builds and
#     runs twice: on qpconnect::shared, whose libqpconnect.so.<major> must
#     resolve from the prefix through the RUNPATH CMake writes for an imported
#     library, and on the static parts, which must not need it;
#   - a C99 consumer (c_consumer/) builds with plain
#     `cc main.c $(pkg-config --cflags --libs qpconnect)` and runs with
#     LD_LIBRARY_PATH=<libdir>, printing qpc_version_string();
#   - the tools' man pages are installed under share/man/man1, and LICENSE,
#     NOTICE, SECURITY.md and CHANGELOG.md under share/doc/qpconnect.
#
# Usage: package_test.sh [--keep DIR] BUILD_DIR [CONSUMER_SOURCE_DIR]
# With --keep DIR, the prefix and the consumers are left in DIR (empty or new)
# for reuse, e.g. to run the consumers elsewhere, and the last lines printed
# are shell assignments naming them:
#   QPC_PKG_PREFIX QPC_PKG_LIBDIR QPC_PKG_CONFIG_PATH QPC_PKG_CXX_SHARED
#   QPC_PKG_CXX_STATIC QPC_PKG_C
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
keep=""
if [[ "${1:-}" == "--keep" ]]; then
  keep=$2
  shift 2
fi
build=$1
consumer=${2:-$here/consumer}
c_consumer=$here/c_consumer

if [[ -n "$keep" ]]; then
  mkdir -p "$keep"
  work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
prefix=$work/prefix
fail() {
  echo "package_test: FAIL: $*" >&2
  exit 1
}
# run LOG CMD...: runs CMD quietly; on failure shows its output.
run() {
  local log=$1
  shift
  "$@" >"$work/$log" 2>&1 || {
    cat "$work/$log" >&2
    fail "$* (log above)"
  }
}

run install.log cmake --install "$build" --prefix "$prefix"

pc=$(find "$prefix" -path '*/pkgconfig/qpconnect.pc' | head -n 1)
[[ -n "$pc" ]] || fail "no lib*/pkgconfig/qpconnect.pc installed under $prefix"
export PKG_CONFIG_PATH=$(dirname "$pc")
version=$(pkg-config --modversion qpconnect)
libdir=$(cd "$(pkg-config --variable=libdir qpconnect)" && pwd)
includedir=$(cd "$(pkg-config --variable=includedir qpconnect)" && pwd)
soname=libqpconnect.so.${version%%.*}

# The shared library and its SONAME.
[[ -f "$libdir/$soname" ]] || fail "$libdir/$soname is not installed"
readelf -d "$libdir/libqpconnect.so" | grep -qF "Library soname: [$soname]" ||
  fail "libqpconnect.so has no SONAME $soname: $(readelf -d "$libdir/libqpconnect.so" | grep SONAME)"

# resolved BINARY: where the dynamic loader finds libqpconnect for BINARY.
resolved() { ldd "$1" | awk '$1 ~ /^libqpconnect\.so/ { print $3 }'; }
# expect_from_prefix BINARY: libqpconnect.so.<major> resolves to the prefix's copy.
expect_from_prefix() {
  local got
  got=$(resolved "$1")
  [[ -n "$got" && "$(readlink -f "$got")" == "$(readlink -f "$libdir/$soname")" ]] ||
    fail "$1 resolves $soname to '${got:-nothing}', not $libdir/$soname"
}

# The C++ consumer, through the CMake package.
run cxx-configure.log cmake -S "$consumer" -B "$work/cxx" -DCMAKE_PREFIX_PATH="$prefix"
run cxx-build.log cmake --build "$work/cxx"
expect_from_prefix "$work/cxx/c_shared"
[[ -z "$(resolved "$work/cxx/c_static")" ]] || fail "c_static needs libqpconnect.so"
"$work/cxx/c_shared" || fail "c_shared (qpconnect::shared) exited $?"
"$work/cxx/c_static" || fail "c_static (static parts) exited $?"
"$work/cxx/c_mesh_sa" || fail "c_mesh_sa (qpconnect::mesh, qpconnect::sa) exited $?"
"$work/cxx/c_observe" || fail "c_observe (qpconnect::observe) exited $?"

# The C consumer, through pkg-config and the C API.
[[ -f "$includedir/qpconnect/qpconnect.h" ]] ||
  fail "the C API header qpconnect/qpconnect.h is not installed in $includedir"
mkdir -p "$work/c"
# Word splitting of pkg-config's output is intended, as in a Makefile.
# shellcheck disable=SC2046
run c-build.log cc -std=c99 -Wall -Wextra -Wpedantic -Werror "$c_consumer/main.c" \
  $(pkg-config --cflags --libs qpconnect) -o "$work/c/c_consumer"
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
expect_from_prefix "$work/c/c_consumer"
out=$("$work/c/c_consumer") || fail "c_consumer exited $?"
[[ "$out" == "qpconnect $version" ]] || fail "c_consumer printed '$out', not 'qpconnect $version'"

# The man pages the build generated are installed.
for page in "$build"/tools/*/*.1; do
  [[ -e "$page" ]] || continue
  [[ -f "$prefix/share/man/man1/$(basename "$page")" ]] ||
    fail "$(basename "$page") is not installed in $prefix/share/man/man1"
done

# The license and notices are installed with the rest.
for f in LICENSE NOTICE SECURITY.md CHANGELOG.md; do
  [[ -f "$prefix/share/doc/qpconnect/$f" ]] || fail "$f is not installed in $prefix/share/doc/qpconnect"
done

echo "package_test: ok: $soname, C++ consumer (shared, static, mesh and sa), C consumer ($out)"
[[ -n "$keep" ]] || exit 0
cat <<EOF
QPC_PKG_PREFIX=$prefix
QPC_PKG_LIBDIR=$libdir
QPC_PKG_CONFIG_PATH=$PKG_CONFIG_PATH
QPC_PKG_CXX_SHARED=$work/cxx/c_shared
QPC_PKG_CXX_STATIC=$work/cxx/c_static
QPC_PKG_C=$work/c/c_consumer
EOF
