#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Debian packages of a build tree with CPack, installs them with apt
# on this host, checks them as a user would, and purges them
# (docs/packaging.md, "Debian packages"):
#   - cpack writes qpconnect-tools, libqpconnect<soversion>, libqpconnect-dev
#     and libqpcm, each with its Depends;
#   - `apt-get install ./*.deb` installs them (their dependencies from the
#     archive when missing);
#   - every tool runs from PATH (`qp-info --version`, ... as /usr/bin/...);
#   - a C++ program (tests/package/consumer) builds against the installed -dev
#     through find_package(qpconnect) with no prefix given, a C99 program
#     (tests/package/c_consumer) through `pkg-config qpconnect`, and both run
#     on the installed libqpconnect.so.<soversion>;
#   - qp-cm finds the installed libqpcm: a program it starts has it mapped,
#     and with --mode library-path rping's librdmacm.so.1 resolves to the
#     installed compat link; in the Soft-RoCE lab (one boot), stock rping
#     connects through the installed /usr/bin/qp-cm with the kernel CM
#     removed (tests/rdmacm/rping.sh rxe_lib; the guest sees the host's /usr);
#   - `man qp-connect` finds and formats the installed page;
#   - `apt-get purge` leaves no file or directory of the packages behind, and
#     ldconfig forgets the library.
# Whatever happens, the packages (and any dependency this run installed) are
# purged on exit, so the host is left as it was.
#
# Usage: deb_install_test.sh BUILD_DIR
# Needs root, apt-get and dpkg, and the lab for the rping part: without them
# it exits 77 (skipped), or 1 where skips are failures (CI;
# tools/lab/skip_or_fail.sh). Exit 1 on a failed check, naming it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: deb_install_test.sh BUILD_DIR}" && pwd)
source "$src/tools/lab/skip_or_fail.sh"
skip() { skip_or_fail "deb_install_test: $*"; }
fail() {
  echo "deb_install_test: FAIL: $*" >&2
  exit 1
}
[[ $(id -u) -eq 0 ]] || skip "installing packages needs root"
for tool in apt-get dpkg dpkg-deb cpack; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
command -v man >/dev/null || fail "man is not installed (man-db; tools/dev/deps.sh --group test)"

work=$(mktemp -d)
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o DPkg::Lock::Timeout=300 --no-install-recommends)
packages=()    # ours, once built
pulled_in=()   # what apt installed besides ours
# installed PACKAGE: PACKAGE is installed (or half-installed) on this host.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -qv 'not-installed'; }
cleanup() {
  local rc=$? left=()
  for p in "${packages[@]}" "${pulled_in[@]}"; do
    installed "$p" && left+=("$p")
  done
  if ((${#left[@]})); then
    apt-get purge "${apt_opts[@]}" "${left[@]}" >"$work/cleanup.log" 2>&1 ||
      { cat "$work/cleanup.log" >&2; echo "deb_install_test: could not purge ${left[*]}" >&2; rc=1; }
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM  # ctest's timeout, a kill: still purge (through the EXIT trap)
trap 'exit 130' INT
source "$here/run_quietly.sh"  # run LOG CMD...

# 1. The packages.
[[ -f $build/CPackConfig.cmake ]] || fail "$build has no CPackConfig.cmake (configured without QPCONNECT_INSTALL?)"
run cpack.log cpack --config "$build/CPackConfig.cmake" -B "$work/debs"
mapfile -t debs < <(find "$work/debs" -maxdepth 1 -name '*.deb' | sort)
((${#debs[@]} == 4)) || fail "cpack wrote ${#debs[@]} packages, not 4: ${debs[*]##*/}"
version=$(dpkg-deb -f "${debs[0]}" Version)
IFS=. read -r major minor _ <<<"$version"
soversion=$major
((major == 0)) && soversion=0.$minor
lib_package=libqpconnect$soversion
for deb in "${debs[@]}"; do
  packages+=("$(dpkg-deb -f "$deb" Package)")
  [[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "${deb##*/} is not version $version"
done
for p in qpconnect-tools "$lib_package" libqpconnect-dev libqpcm; do
  [[ " ${packages[*]} " == *" $p "* ]] || fail "no package $p among ${packages[*]}"
done
deb_of() { find "$work/debs" -maxdepth 1 -name "${1}_*.deb"; }
# depends PACKAGE WANT: PACKAGE's Depends names WANT (a regex over one entry).
depends() {
  dpkg-deb -f "$(deb_of "$1")" Depends | tr ',' '\n' | sed 's/^ *//' | grep -qE "^($2)$" ||
    fail "$1 does not depend on '$2': $(dpkg-deb -f "$(deb_of "$1")" Depends)"
}
depends libqpconnect-dev "$lib_package \\(= $version\\)"
depends libqpconnect-dev "libibverbs-dev"
depends qpconnect-tools "libqpcm \\(= $version\\)"
depends "$lib_package" "libibverbs1 .*"  # from dpkg-shlibdeps
depends libqpcm "libibverbs1 .*"
depends qpconnect-tools "libc6 .*"
# The library's shlibs file: a package built against it gets "libqpconnect<so> (>= version)".
dpkg-deb --ctrl-tarfile "$(deb_of "$lib_package")" | tar -xO ./shlibs 2>/dev/null |
  grep -qx "libqpconnect $soversion $lib_package (>= $version)" ||
  fail "$lib_package has no shlibs line 'libqpconnect $soversion $lib_package (>= $version)'"
for p in "${packages[@]}"; do
  installed "$p" && { packages=(); fail "$p is installed already: this test would remove it"; }
done

# Every path the packages hold, and those of them this host has already
# (/usr, /usr/bin, ...): after the purge, the others must be gone.
for deb in "${debs[@]}"; do
  dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' | grep -v '^/\?$'
done | sort -u >"$work/paths"
while read -r path; do
  [[ -e $path || -L $path ]] && echo "$path"
done <"$work/paths" >"$work/paths.before"

# 2. Install, as a user would.
mapfile -t new < <(apt-get install -s "${apt_opts[@]}" "${debs[@]}" 2>/dev/null | awk '$1 == "Inst" {print $2}')
for p in "${new[@]}"; do
  [[ " ${packages[*]} " == *" $p "* ]] || pulled_in+=("$p")
done
run apt-install.log apt-get install "${apt_opts[@]}" "${debs[@]}"
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" | grep -q "install ok installed" || fail "$p is not installed"
done
((${#pulled_in[@]} == 0)) || echo "deb_install_test: apt also installed ${pulled_in[*]} (purged at the end)"

# 3. The tools from PATH: a clean environment, nothing of the build tree.
clean_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root)
[[ $("${clean_env[@]}" sh -c 'command -v qp-info') == /usr/bin/qp-info ]] || fail "qp-info is not /usr/bin/qp-info on PATH"
out=$("${clean_env[@]}" qp-info --version) || fail "qp-info --version exited $?"
[[ $(head -n 1 <<<"$out") == "qp-info (qpconnect) $version" ]] || fail "qp-info --version printed '$out'"
ntools=0
while read -r tool; do
  "${clean_env[@]}" "$tool" --version >/dev/null || fail "$tool --version exited $?"
  ntools=$((ntools + 1))
done < <(dpkg -L qpconnect-tools | grep '^/usr/bin/')
((ntools >= 7)) || fail "qpconnect-tools installs $ntools tools in /usr/bin, expected at least 7"

# 4. Programs built against the installed -dev, with nothing pointing at a prefix.
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH
run cxx-configure.log cmake -S "$here/consumer" -B "$work/cxx" -DQPC_WANT_VERSION="$major.$minor"
grep -q "^qpconnect_DIR:PATH=/usr/" "$work/cxx/CMakeCache.txt" ||
  fail "the consumer found qpconnect at $(grep '^qpconnect_DIR' "$work/cxx/CMakeCache.txt"), not under /usr"
run cxx-build.log cmake --build "$work/cxx" -j 2
# libfile BINARY: the file libqpconnect.so.<soversion> of BINARY resolves to.
libfile() { ldd "$1" | awk '$1 ~ /^libqpconnect\.so/ {print $3}'; }
got=$(libfile "$work/cxx/c_shared")
[[ -n $got ]] && dpkg -S "$(readlink -f "$got")" 2>/dev/null | grep -q "^$lib_package:" ||
  fail "c_shared resolves libqpconnect.so.$soversion to '${got:-nothing}', not $lib_package's"
"$work/cxx/c_shared" || fail "c_shared (find_package, qpconnect::shared) exited $?"
"$work/cxx/c_static" || fail "c_static (find_package, static parts) exited $?"
mkdir -p "$work/c"
# shellcheck disable=SC2046  # pkg-config's words, as in a Makefile
run c-build.log cc -std=c99 -Wall -Wextra -Wpedantic -Werror "$here/c_consumer/main.c" \
  $(pkg-config --cflags --libs qpconnect) -o "$work/c/c_consumer"
out=$("$work/c/c_consumer") || fail "c_consumer (pkg-config) exited $?"
[[ $out == "qpconnect $version" ]] || fail "c_consumer printed '$out', not 'qpconnect $version'"

# 5. qp-cm and the installed libqpcm.
qpcm=$(dpkg -L libqpcm | grep '/libqpcm\.so\.[0-9.]*[0-9]$' | sort | tail -n 1)
[[ -n $qpcm ]] || fail "libqpcm installs no libqpcm.so.<version>"
maps=$("${clean_env[@]}" qp-cm -- cat /proc/self/maps) || fail "qp-cm -- cat exited $?"
grep -qF "$(readlink -f "$qpcm")" <<<"$maps" || fail "a program qp-cm started has no $qpcm mapped"
if rping=$(command -v rping); then
  resolved=$("${clean_env[@]}" qp-cm --mode library-path -- ldd "$rping" | awk '$1 == "librdmacm.so.1" {print $3}')
  [[ -n $resolved && $(readlink -f "$resolved") == "$(readlink -f "$qpcm")" ]] ||
    fail "with qp-cm --mode library-path, rping's librdmacm.so.1 is '$resolved', not the installed compat link to $qpcm"
  rping_note="rping's librdmacm.so.1 -> $resolved"
else
  skip "rping is not installed (rdmacm-utils; tools/dev/deps.sh)"
fi
# A real connection: stock rping, server on rxe0 and client on rxe1, both
# through the installed qp-cm, with the kernel CM removed so only libqpcm can
# connect them. The guest sees the host's root (read-only, with an overlay).
cm_events=$build/tests/rdmacm/cm_events
[[ -x $cm_events ]] || skip "$cm_events is not built (the kernel-CM probe rping.sh needs)"
lab_rc=0
"$src/tools/lab/lab-run" --timeout 600 -- "$src/tests/rdmacm/rping.sh" rxe_lib \
  --cm-events "$cm_events" --qp-cm /usr/bin/qp-cm --via wrapper >"$work/lab.log" 2>&1 || lab_rc=$?
case $lab_rc in
  0) rping_note+="; rping connected through /usr/bin/qp-cm in the lab" ;;
  125) cat "$work/lab.log" >&2; skip "the lab could not run (tools/lab/lab-run exit 125)" ;;
  *) cat "$work/lab.log" >&2; fail "rping through the installed qp-cm in the lab (exit $lab_rc, log above)" ;;
esac

# 6. The man pages.
page=$(man -w qp-connect 2>/dev/null) || fail "man -w qp-connect finds no page"
dpkg -S "$page" 2>/dev/null | grep -q '^qpconnect-tools:' || fail "man qp-connect opens $page, not qpconnect-tools' page"
MANPAGER=cat MANWIDTH=80 man qp-connect 2>/dev/null | grep -q -- '--transport' ||
  fail "man qp-connect does not show the page's options"

# 7. Purge: nothing of the packages is left.
run apt-purge.log apt-get purge "${apt_opts[@]}" "${packages[@]}"
for p in "${packages[@]}"; do
  ! installed "$p" || fail "$p is still installed after apt-get purge"
done
left=$(comm -23 "$work/paths" "$work/paths.before" | while read -r path; do
  [[ -e $path || -L $path ]] && echo "$path"
done || true)
[[ -z $left ]] || fail "after apt-get purge these are left: $left"
! ldconfig -p | grep -q "libqpconnect\.so" || fail "ldconfig still knows libqpconnect after the purge"

echo "deb_install_test: ok: ${packages[*]} $version installed, $ntools tools from PATH," \
  "consumers on find_package and pkg-config, qp-cm preloads $qpcm ($rping_note)," \
  "man $page, purged with $(wc -l <"$work/paths") paths checked"
