#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs a build tree into a temporary prefix and checks what a program
# embedding qpconnect gets from it (no RDMA device needed):
#   - libqpconnect.so carries the SONAME libqpconnect.so.0.<minor> for 0.x,
#     libqpconnect.so.<major> from 1.0, and libqpcm.so libqpcm.so.<the same>,
#     with compat/librdmacm.so.1 linking to it; <qpconnect/version_numbers.h> names both;
#   - the CMake package accepts this major.minor and refuses the other minors
#     (0.x) or majors: against 0.1, find_package(qpconnect 0.2) fails (newer)
#     and so does find_package(qpconnect 0.0) (older: a 0.x minor is its own ABI);
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
source "$(dirname "$0")/run_quietly.sh"  # run LOG CMD...

run install.log cmake --install "$build" --prefix "$prefix"

pc=$(find "$prefix" -path '*/pkgconfig/qpconnect.pc' | head -n 1)
[[ -n "$pc" ]] || fail "no lib*/pkgconfig/qpconnect.pc installed under $prefix"
export PKG_CONFIG_PATH=$(dirname "$pc")
version=$(pkg-config --modversion qpconnect)
libdir=$(cd "$(pkg-config --variable=libdir qpconnect)" && pwd)
includedir=$(cd "$(pkg-config --variable=includedir qpconnect)" && pwd)
# The version policy (docs/packaging.md, "Versions"; cmake/QpcVersion.cmake):
# per minor while the major is 0, per major after.
IFS=. read -r major minor _ <<<"$version"
# Versions find_package must refuse: the next minor (major), and the previous
# one where there is one.
if ((major == 0)); then
  soversion=0.$minor refused=(0.$((minor + 1)))
  ((minor > 0)) && refused+=(0.$((minor - 1)))
else
  soversion=$major refused=($((major + 1)).0)
  ((major > 1)) && refused+=($((major - 1)).0)
fi
soname=libqpconnect.so.$soversion

# The shared library and its SONAME.
[[ -f "$libdir/$soname" ]] || fail "$libdir/$soname is not installed"
readelf -d "$libdir/libqpconnect.so" | grep -qF "Library soname: [$soname]" ||
  fail "libqpconnect.so has no SONAME $soname: $(readelf -d "$libdir/libqpconnect.so" | grep SONAME)"

# libqpcm: versioned the same way, in LIBDIR/qpconnect, where compat/librdmacm.so.1
# (the file name a program linked against librdmacm asks for) links to it.
qpcm=$libdir/qpconnect/libqpcm.so
[[ -f $qpcm.$version && -L $qpcm.$soversion && -e $qpcm ]] ||
  fail "libqpcm.so.$version, its link libqpcm.so.$soversion or libqpcm.so is missing in $libdir/qpconnect"
readelf -d "$qpcm" | grep -qF "Library soname: [libqpcm.so.$soversion]" ||
  fail "libqpcm.so has no SONAME libqpcm.so.$soversion: $(readelf -d "$qpcm" | grep SONAME)"
[[ "$(readlink "$libdir/qpconnect/compat/librdmacm.so.1")" == "../libqpcm.so.$soversion" ]] ||
  fail "compat/librdmacm.so.1 links to '$(readlink "$libdir/qpconnect/compat/librdmacm.so.1")', not ../libqpcm.so.$soversion"

# The version header names the same versions the files carry.
for want in "QPCONNECT_VERSION_STRING \"$version\"" "QPCONNECT_LIBRARY_SONAME \"$soname\"" \
  "QPCM_LIBRARY_SONAME \"libqpcm.so.$soversion\""; do
  grep -qF "#define $want" "$includedir/qpconnect/version_numbers.h" ||
    fail "qpconnect/version_numbers.h does not define $want"
done

# resolved BINARY: where the dynamic loader finds libqpconnect for BINARY.
resolved() { ldd "$1" | awk '$1 ~ /^libqpconnect\.so/ { print $3 }'; }
# expect_from_prefix BINARY: libqpconnect.so.<major> resolves to the prefix's copy.
expect_from_prefix() {
  local got
  got=$(resolved "$1")
  [[ -n "$got" && "$(readlink -f "$got")" == "$(readlink -f "$libdir/$soname")" ]] ||
    fail "$1 resolves $soname to '${got:-nothing}', not $libdir/$soname"
}

# The CMake package refuses a consumer that asks for another minor (0.x) or
# major: it was built against another SONAME.
for want in "${refused[@]}"; do
  if cmake -S "$consumer" -B "$work/cxx-$want" -DCMAKE_PREFIX_PATH="$prefix" \
    -DQPC_WANT_VERSION="$want" >"$work/cxx-$want.log" 2>&1; then
    fail "find_package(qpconnect $want) accepted version $version"
  fi
  grep -q 'version: *'"$version" "$work/cxx-$want.log" ||
    { cat "$work/cxx-$want.log" >&2; fail "find_package(qpconnect $want) failed, but not for the version"; }
done

# The C++ consumer, through the CMake package.
run cxx-configure.log cmake -S "$consumer" -B "$work/cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DQPC_WANT_VERSION="$major.$minor"
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

echo "package_test: ok: $soname, libqpcm.so.$soversion, find_package $major.$minor accepted and ${refused[*]} refused, C++ consumer (shared, static, mesh and sa), C consumer ($out)"
[[ -n "$keep" ]] || exit 0
cat <<EOF
QPC_PKG_PREFIX=$prefix
QPC_PKG_LIBDIR=$libdir
QPC_PKG_CONFIG_PATH=$PKG_CONFIG_PATH
QPC_PKG_CXX_SHARED=$work/cxx/c_shared
QPC_PKG_CXX_STATIC=$work/cxx/c_static
QPC_PKG_C=$work/c/c_consumer
EOF
