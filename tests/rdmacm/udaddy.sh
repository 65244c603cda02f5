#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stock `udaddy` (rdmacm-utils), UD over RDMA_PS_UDP: server `udaddy -b
# SERVER_ADDR`, client `udaddy -s SERVER_ADDR -b CLIENT_ADDR` (one path, 10
# datagrams each way, port 7174: udaddy has no port option, its -p is the port
# space). Success: both exit 0 with "test complete" and "return status 0".
# Deterministic output: everything both sides print. Usage and modes:
# rdmacm_common.sh.
set -uo pipefail
PROG_BIN=udaddy
. "$(dirname "$0")/rdmacm_common.sh"

prog_pair() {
  run_pair "$1" "$2" 7174 40 -- udaddy -b "$2" -- udaddy -s "$2" -b "$3"
}
prog_ok() {
  local ok=0 f
  ((S_RC == 0 && C_RC == 0)) || { echo "   udaddy exit: server $S_RC, client $C_RC (want 0, 0)"; ok=1; }
  for f in server client; do
    grep -q '^test complete' "$WORK/$1.$f" && grep -q '^return status 0' "$WORK/$1.$f" ||
      { echo "   the $f did not print 'test complete' and 'return status 0'"; ok=1; }
  done
  return $ok
}
prog_digest() {
  sed 's/^/server: /' "$WORK/$1.server"
  sed 's/^/client: /' "$WORK/$1.client"
  echo "server exit $S_RC, client exit $C_RC"
}
prog_failed() {
  ((C_RC != 0 && C_RC != 124)) || grep -q '^return status [^0]' "$WORK/$1.client" || return 1
  echo "   client (exit $C_RC): $(head -n 3 "$WORK/$1.client" | tr '\n' ' ')"
  echo "   server (exit $S_RC): $(head -n 3 "$WORK/$1.server" | tr '\n' ' ')"
  ((S_RC != 0)) || grep -q '^return status [^0]' "$WORK/$1.server"
}
rdmacm_main "$@"
