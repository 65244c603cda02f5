#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# stock_rping.sh [COUNT]: anchor test for the rdma_cm path with the stock
# rdmacm-utils: `rping` server on QPC_IP0 and client bound to QPC_IP1 (-I; an
# unbound client resolves both ends to the first device). Passes only if both
# exit 0 within 60 s. Runs inside tools/lab/lab-run (see docs/lab.md).
set -euo pipefail

count=${1:-10}
limit=60  # seconds per program: no hang (the run itself takes a few seconds under TCG)
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v rping >/dev/null || fail "rping not installed (rdmacm-utils)"
for v in QPC_IP0 QPC_IP1; do
  [[ -n ${!v:-} ]] || fail "$v is not set (run under tools/lab/lab-run)"
done

timeout "$limit" rping -s -a "$QPC_IP0" -C "$count" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT

# The client does not retry, so wait (bounded) until the server listens
# (rdma_cm ids show up in `rdma resource show cm_id`; 7174 is rping's port).
for ((i = 0; ; i++)); do
  if rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr $QPC_IP0:7174"; then break; fi
  kill -0 "$server" 2>/dev/null || { wait "$server" || true; fail "rping server exited before listening"; }
  ((i < 200)) || fail "rping server not listening after 20 s"
  sleep 0.1
done

client_rc=0
timeout "$limit" rping -c -a "$QPC_IP0" -I "$QPC_IP1" -C "$count" -v || client_rc=$?
server_rc=0
wait "$server" || server_rc=$?
trap - EXIT
echo "rping: server exit $server_rc, client exit $client_rc"
[[ $client_rc -ne 124 && $server_rc -ne 124 ]] || fail "rping timed out after ${limit}s"
[[ $client_rc -eq 0 && $server_rc -eq 0 ]] || fail "rping failed"
echo "PASS"
