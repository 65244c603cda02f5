#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stock `rdma_server` / `rdma_client` (rdmacm-utils; the synchronous
# rdma_getaddrinfo + rdma_create_ep style, no event channel): server
# `rdma_server -s SERVER_ADDR`, client `rdma_client -s SERVER_ADDR` (port
# 7471, their default). rdma_client has no bind option: natively both ends
# then resolve to rxe0 on rxe's addresses. Success: both exit 0 printing
# "end 0". Deterministic output: everything both print. Usage and modes:
# rdmacm_common.sh.
set -uo pipefail
PROG_BIN=rdma_client
. "$(dirname "$0")/rdmacm_common.sh"

prog_pair() {
  run_pair "$1" "$2" 7471 40 -- rdma_server -s "$2" -- rdma_client -s "$2"
}
prog_ok() {
  local ok=0
  ((S_RC == 0 && C_RC == 0)) || { echo "   exit: rdma_server $S_RC, rdma_client $C_RC (want 0, 0)"; ok=1; }
  grep -q '^rdma_server: end 0$' "$WORK/$1.server" || { echo "   rdma_server did not print 'end 0'"; ok=1; }
  grep -q '^rdma_client: end 0$' "$WORK/$1.client" || { echo "   rdma_client did not print 'end 0'"; ok=1; }
  return $ok
}
prog_digest() {
  sed 's/^/server: /' "$WORK/$1.server"
  sed 's/^/client: /' "$WORK/$1.client"
  echo "server exit $S_RC, client exit $C_RC"
}
prog_failed() {
  ((C_RC != 0 && C_RC != 124)) || return 1
  echo "   client (exit $C_RC): $(head -n 3 "$WORK/$1.client" | tr '\n' ' ')"
  echo "   server (exit $S_RC): $(head -n 3 "$WORK/$1.server" | tr '\n' ' ')"
  ((S_RC != 0))
}
rdmacm_main "$@"
