#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stock `cmtime` (rdmacm-utils 44): server `cmtime -b SERVER_ADDR`, client
# `cmtime -s SERVER_ADDR -b CLIENT_ADDR -c 20` (port 7471, cmtime's default;
# -b binds the client, or native rdma_cm resolves both ends to rxe0). The
# server of this version never exits by itself: it is stopped once the client
# is done (it must still be running then). Success: the client exits 0 and
# prints its whole step table. Deterministic output: the client's progress
# lines and the step names (the times vary). Usage and modes: rdmacm_common.sh.
set -uo pipefail
PROG_BIN=cmtime
CONNS=20
. "$(dirname "$0")/rdmacm_common.sh"

prog_pair() {
  run_pair "$1" "$2" 7471 40 --kill-server -- cmtime -b "$2" \
    -- cmtime -s "$2" -b "$3" -c "$CONNS"
}
STEPS='create id|bind addr|resolve addr|resolve route|create qp|connect|disconnect|destroy'
prog_ok() {
  local ok=0 n
  ((C_RC == 0)) || { echo "   cmtime client exit $C_RC (want 0)"; ok=1; }
  ((SERVER_ALIVE)) || { echo "   the cmtime server exited before the client was done (exit $S_RC)"; ok=1; }
  n=$(grep -cE "^($STEPS) *:" "$WORK/$1.client")
  ((n == 8)) || { echo "   $n of the 8 step lines printed"; ok=1; }
  if grep -qE 'event:|ERROR|failure|failed' "$WORK/$1.client"; then
    echo "   the client printed an error"
    ok=1
  fi
  return $ok
}
prog_digest() {
  sed -E 's/^([a-z ]+[a-z]) *:.*/\1 : (times)/' "$WORK/$1.client"
  echo "client exit $C_RC"
}
prog_failed() {
  ((C_RC != 0 && C_RC != 124)) || return 1
  echo "   client (exit $C_RC): $(head -n 3 "$WORK/$1.client" | tr '\n' ' ')"
  echo "   server (exit $S_RC): $(head -n 3 "$WORK/$1.server" | tr '\n' ' ')"
  ((!SERVER_ALIVE))
}
rdmacm_main "$@"
