#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools_json_lab.sh BUILD_DIR SOURCE_DIR (inside the lab): the JSON the tools
# print against real devices, checked against docs/schemas/ with the
# jsonschema library: qp-info --json and -l --json; qp-connect --json on both
# sides of an RC pair with 2 QPs (and the server's --dump file against the
# endpoint schema), a UD size sweep (-a) in Gb/s, and a client that finds no
# server (the error document); qp-inspect --json.
set -uo pipefail
build=${1:?usage: tools_json_lab.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: tools_json_lab.sh BUILD_DIR SOURCE_DIR}
source "$src/tools/lab/skip_or_fail.sh"
python3 -c 'import jsonschema' 2>/dev/null || skip_or_fail "python3-jsonschema is not installed"
check() { "$src/tests/schemas/check_json.py" "$src/docs/schemas" "$@"; }
qpc=$build/tools/qp-connect/qp-connect
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
fail=0
listening() { for _ in $(seq 1 200); do ss -ltn | grep -q ":$1 " && return 0; sleep 0.05; done; return 1; }
pair() {  # pair NAME PORT SERVER_ARGS... -- CLIENT_ARGS...: both --json, both must exit 0
  local name=$1 port=$2 s=() c=() sp src crc
  shift 2
  while [[ $# -gt 0 && $1 != -- ]]; do s+=("$1"); shift; done
  shift; c=("$@")
  "$qpc" -d "$QPC_DEV0" -p "$port" --json "${s[@]}" >"$out/${name}_server.json" 2>"$out/${name}_server.err" &
  sp=$!
  listening "$port" || echo "server of $name is not listening"
  "$qpc" -d "$QPC_DEV1" -p "$port" --json "${c[@]}" "$QPC_IP0" >"$out/${name}_client.json" 2>"$out/${name}_client.err"
  crc=$?
  wait "$sp"; src=$?
  if [[ $crc -ne 0 || $src -ne 0 ]]; then
    echo "FAIL: $name: client exit $crc, server exit $src"
    tail -n 5 "$out/${name}"_*.err; fail=1
  fi
}

"$build/tools/qp-info/qp-info" --json >"$out/qp_info.json" || { echo "FAIL: qp-info --json"; fail=1; }
"$build/tools/qp-info/qp-info" -l --json >"$out/qp_info_l.json" || { echo "FAIL: qp-info -l --json"; fail=1; }
check qp-info.schema.json "$out/qp_info.json" "$out/qp_info_l.json" || fail=1

pair rc2 19100 --qps 2 --dump "$out/server.dump.json" -- --qps 2 -n 20
pair sweep 19101 -t ud -a -s 64 --report-gbits -- -t ud -a -s 64 -n 5 --report-gbits
"$qpc" -d "$QPC_DEV1" -p 19102 --json --timeout 2 "$QPC_IP0" >"$out/refused_client.json" 2>/dev/null
rc=$?
[[ $rc -eq 4 ]] || { echo "FAIL: a client without a server exited $rc, want 4"; fail=1; }
check qp-connect.schema.json "$out"/rc2_*.json "$out"/sweep_*.json "$out/refused_client.json" || fail=1
check endpoint.schema.json "$out/server.dump.json" || fail=1

"$build/tools/qp-inspect/qp-inspect" --json >"$out/inspect.json" 2>"$out/inspect.err" ||
  { echo "FAIL: qp-inspect --json"; cat "$out/inspect.err"; fail=1; }
check snapshot.schema.json "$out/inspect.json" || fail=1

left=$(rdma resource show qp 2>/dev/null | grep -c -E ' type (RC|UD) ' || true)
[[ $left -eq 0 ]] || { echo "FAIL: $left QP(s) left"; rdma resource show qp; fail=1; }
exit "$fail"
