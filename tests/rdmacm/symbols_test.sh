#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 39: libqpcm's version script against librdmacm's symbol set.
#
#   symbols_test.sh LIBQPCM MAP [INSTALLED]
#
#   LIBQPCM    the built library (<build>/rdmacm/libqpcm.so)
#   MAP        a copy of rdma-core's newest librdmacm/librdmacm.map
#              (tests/testdata/rdmacm/librdmacm.map; README.md there says
#              where it came from)
#   INSTALLED  the installed librdmacm.so.1 (default: the one ldconfig
#              knows); absent: that part is skipped, said aloud
#
# Must hold:
#   - every symbol rdma-core's map exports, in its version node, is a
#     defined function of LIBQPCM's dynamic symbol table with that version;
#   - every symbol and version the installed librdmacm.so.1 exports is too
#     (a program linked against it binds to ours, whichever way it is
#     started);
#   - LIBQPCM exports nothing else (everything else stays local);
#   - each version node of LIBQPCM has the parent rdma-core's map gives it
#     (RDMACM_1.1 after 1.0, ...), as the installed library's have.
# Whether each is implemented or fails with ENOSYS and one log line is
# docs/rdmacm.md's "Supported" / "Not supported"; this checks the ABI only.
# Prints every difference.
set -uo pipefail
lib=${1:?usage: symbols_test.sh LIBQPCM MAP [INSTALLED]}
map=${2:?usage: symbols_test.sh LIBQPCM MAP [INSTALLED]}
installed=${3:-}
if [[ -z $installed ]]; then
  installed=$(ldconfig -p 2>/dev/null | awk '$1 == "librdmacm.so.1" && /x86-64|x86_64/ {print $NF; exit}')
fi
fail=0
bad() {
  echo "FAIL: $*"
  fail=1
}
[[ -r $lib ]] || { echo "FAIL: $lib is not readable (build libqpcm first)"; exit 1; }
[[ -r $map ]] || { echo "FAIL: $map is not readable"; exit 1; }

# defined SO: "symbol version" of each defined function SO exports.
defined() {
  readelf --dyn-syms -W "$1" | awk '
    $7 != "UND" && $4 == "FUNC" && $8 ~ /@/ {
      n = $8; sub(/@@?.*/, "", n); v = $8; sub(/^[^@]*@@?/, "", v); print n, v
    }' | sort -u
}

# parents SO: "node parent" of each version definition ("node -" for none).
parents() {
  readelf -V -W "$1" | awk '
    /Version definition section/ { on = 1; next }
    /Version (needs|symbols) section/ { on = 0 }
    on && /Name:/ && !/Flags: BASE/ { node = $NF; print node, "-"; next }
    on && /Parent 1:/ { print node, $NF }' |
    awk '{ had = ($1 in p); if (!had || $2 != "-") p[$1] = $2 } END { for (n in p) print n, p[n] }' | sort
}

# map_symbols MAP: "symbol version" of each global of a version script.
map_symbols() {
  sed 's|/\*.*\*/||g' "$1" | tr ';{}' '\n\n\n' | awk '
    /^[[:space:]]*RDMACM_[0-9.]+[[:space:]]*$/ { gsub(/[[:space:]]/, ""); node = $0; local = 0; next }
    /global:/ { sub(/.*global:/, ""); local = 0 }
    /local:/ { local = 1; next }
    { gsub(/[[:space:]]/, "") }
    $0 != "" && node != "" && !local && $0 !~ /^RDMACM_/ { print $0, node }' | sort -u
}

# map_parents MAP: "node parent" as the script chains them ("} RDMACM_1.0;").
map_parents() {
  sed 's|/\*.*\*/||g' "$1" | tr -s ' \t\n' ' ' | grep -oE 'RDMACM_[0-9.]+ *\{[^}]*\} *(RDMACM_[0-9.]+)?' |
    awk '{ node = $1; parent = $NF; if (parent !~ /^RDMACM_/ || parent == node) parent = "-"; print node, parent }' | sort
}

ours=$(defined "$lib")
n_ours=$(wc -l <<<"$ours")
echo "== $lib exports $n_ours functions"
want=$(map_symbols "$map")
echo "== rdma-core's map ($map): $(wc -l <<<"$want") symbols in $(map_parents "$map" | wc -l) version nodes"
missing=$(comm -23 <(echo "$want") <(echo "$ours"))
[[ -z $missing ]] && echo "ok: every symbol of rdma-core's map is exported with its version" ||
  bad "in rdma-core's map but not exported by libqpcm (symbol version):"$'\n'"$missing"
if ! diff <(map_parents "$map") <(parents "$lib") >/tmp/symbols_test.$$; then
  bad "version nodes' parents differ, rdma-core's map (<) and libqpcm (>):"$'\n'"$(cat /tmp/symbols_test.$$)"
else
  echo "ok: the version nodes chain as in rdma-core's map: $(parents "$lib" | tr '\n' ' ')"
fi
rm -f /tmp/symbols_test.$$
all=$want
if [[ -n $installed && -r $installed ]]; then
  theirs=$(defined "$installed")
  echo "== the installed $installed exports $(wc -l <<<"$theirs") functions"
  missing=$(comm -23 <(echo "$theirs") <(echo "$ours"))
  [[ -z $missing ]] && echo "ok: every symbol and version the installed librdmacm exports is libqpcm's" ||
    bad "exported by the installed librdmacm but not by libqpcm (symbol version):"$'\n'"$missing"
  extra_nodes=$(comm -23 <(parents "$installed") <(parents "$lib"))
  [[ -z $extra_nodes ]] || bad "the installed librdmacm's version nodes differ from libqpcm's: $extra_nodes"
  all=$(sort -u <(echo "$want") <(echo "$theirs"))
else
  echo "== no installed librdmacm.so.1 found: that comparison is skipped"
fi
extra=$(comm -13 <(echo "$all") <(echo "$ours"))
[[ -z $extra ]] && echo "ok: libqpcm exports nothing else" ||
  bad "exported by libqpcm but by no librdmacm (symbol version):"$'\n'"$extra"
if ((fail)); then
  echo "FAIL"
  exit 1
fi
echo "PASS"
