#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# stock_pingpong.sh KIND [ITERS [SIZE]]: anchor test with the stock
# ibverbs-utils: ibv_KIND_pingpong (KIND = rc, uc, ud, srq) as server on
# QPC_DEV0 and as client on QPC_DEV1, both with the RoCE v2 GID index (-g) the
# lab found. Passes only if both exit 0 within 60 s. Runs inside
# tools/lab/lab-run (see docs/lab.md).
set -euo pipefail

kind=${1:?usage: stock_pingpong.sh rc|uc|ud|srq [iters [size]]}
iters=${2:-100}
size=${3:-}
tool=ibv_${kind}_pingpong
port=18515
limit=60  # seconds per program: no hang (the run itself takes a few seconds under TCG)

fail() { echo "FAIL: $*" >&2; exit 1; }
command -v "$tool" >/dev/null || fail "$tool not installed (ibverbs-utils)"
for v in QPC_DEV0 QPC_DEV1 QPC_GID0 QPC_GID1 QPC_IP0; do
  [[ -n ${!v:-} ]] || fail "$v is not set (run under tools/lab/lab-run)"
done

common=(-p "$port" -n "$iters" -i "${QPC_PORT:-1}")
[[ -z $size ]] || common+=(-s "$size")

timeout "$limit" "$tool" -d "$QPC_DEV0" -g "$QPC_GID0" "${common[@]}" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT

# The client connects once, so wait (bounded) until the server listens: a
# socket whose LOCAL address has the port, in state LISTEN (0A); a TIME_WAIT
# left on the port by an earlier run does not count.
hexport=$(printf ':%04X' "$port")
listening() {
  awk -v p="$hexport" '$2 ~ p"$" && $4 == "0A" {found = 1} END {exit !found}' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
for ((i = 0; ; i++)); do
  if listening; then break; fi
  kill -0 "$server" 2>/dev/null || { wait "$server" || true; fail "$tool server exited before listening"; }
  ((i < 200)) || fail "$tool server not listening on port $port after 20 s"
  sleep 0.1
done

client_rc=0
timeout "$limit" "$tool" -d "$QPC_DEV1" -g "$QPC_GID1" "${common[@]}" "$QPC_IP0" || client_rc=$?
server_rc=0
wait "$server" || server_rc=$?
trap - EXIT
echo "$tool: server exit $server_rc, client exit $client_rc"
[[ $client_rc -ne 124 && $server_rc -ne 124 ]] || fail "$tool timed out after ${limit}s"
[[ $client_rc -eq 0 && $server_rc -eq 0 ]] || fail "$tool failed"
echo "PASS"
