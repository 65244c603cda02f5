#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stock `rping` (rdmacm-utils) with data verification: server `rping -s -a
# SERVER_ADDR -V -C 10 -v`, client `rping -c -a SERVER_ADDR -I CLIENT_ADDR -V
# -C 10 -v` (port 7174, rping's default; -I binds the client, or native
# rdma_cm resolves both ends to rxe0). Success: both exit 0, each printed the
# 10 verified "ping data" lines, no mismatch. Deterministic output: the ping
# data lines of both sides. Usage and modes: rdmacm_common.sh.
set -uo pipefail
PROG_BIN=rping
COUNT=10
. "$(dirname "$0")/rdmacm_common.sh"

prog_pair() {
  run_pair "$1" "$2" 7174 40 -- rping -s -a "$2" -V -C "$COUNT" -v \
    -- rping -c -a "$2" -I "$3" -V -C "$COUNT" -v
}
prog_ok() {
  local ok=0 n m
  ((S_RC == 0 && C_RC == 0)) || { echo "   rping exit: server $S_RC, client $C_RC (want 0, 0)"; ok=1; }
  n=$(grep -c '^ping data: rdma-ping-' "$WORK/$1.client")
  m=$(grep -c '^server ping data: rdma-ping-' "$WORK/$1.server")
  ((n == COUNT && m == COUNT)) || { echo "   verified ping data lines: client $n, server $m (want $COUNT each)"; ok=1; }
  if grep -qi 'mismatch\|error' "$WORK/$1.client" "$WORK/$1.server"; then
    echo "   an error or data mismatch was printed"
    ok=1
  fi
  return $ok
}
prog_digest() {
  grep -h 'ping data: rdma-ping-' "$WORK/$1.server" "$WORK/$1.client"
  echo "server exit $S_RC, client exit $C_RC"
}
prog_failed() {
  ((C_RC != 0 && C_RC != 124)) || return 1
  echo "   client (exit $C_RC): $(head -n 3 "$WORK/$1.client" | tr '\n' ' ')"
  echo "   server (exit $S_RC): $(head -n 3 "$WORK/$1.server" | tr '\n' ' ')"
  ((S_RC != 0))
}
rdmacm_main "$@"
