#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stock `mckey` (rdmacm-utils), UD multicast over RDMA_PS_UDP (issue 39):
# receiver `mckey -m 239.1.1.1 -b SERVER_ADDR`, sender `mckey -m 239.1.1.1
# -b CLIENT_ADDR -s` (10 messages of 100 bytes, sent to the group's MGID with
# QPN 0xffffff). The receiver starts first; the sender once the receiver has
# joined (its "mckey: joined" line: the receiver runs under `stdbuf -oL` so
# that the line arrives while it waits for data). Success: both exit 0, both
# joined ::ffff:239.1.1.1, both print "data transfers complete" (the
# receiver only once all 10 messages arrived). Deterministic output:
# everything both sides print. Usage and modes: rdmacm_common.sh.
set -uo pipefail
PROG_BIN=mckey
. "$(dirname "$0")/rdmacm_common.sh"

MCKEY_GROUP=239.1.1.1
prog_pair() {
  READY_LINE="mckey: joined"
  # Port 0: mckey listens on none; READY_LINE says when it has joined.
  run_pair "$1" "$2" 0 60 -- stdbuf -oL mckey -m "$MCKEY_GROUP" -b "$2" \
    -- mckey -m "$MCKEY_GROUP" -b "$3" -s
  READY_LINE=
}
prog_ok() {
  local ok=0 f
  ((S_RC == 0 && C_RC == 0)) || { echo "   mckey exit: receiver $S_RC, sender $C_RC (want 0, 0)"; ok=1; }
  ((LISTENED)) || { echo "   the receiver never said it joined"; ok=1; }
  for f in server client; do
    grep -q "^mckey: joined dgid: ::ffff:$MCKEY_GROUP " "$WORK/$1.$f" ||
      { echo "   the $f did not join ::ffff:$MCKEY_GROUP"; ok=1; }
    grep -q '^data transfers complete' "$WORK/$1.$f" ||
      { echo "   the $f did not print 'data transfers complete'"; ok=1; }
  done
  grep -q '^receiving data transfers' "$WORK/$1.server" ||
    { echo "   the receiver did not wait for data"; ok=1; }
  return $ok
}
prog_digest() {
  sed 's/^/receiver: /' "$WORK/$1.server"
  sed 's/^/sender: /' "$WORK/$1.client"
  echo "receiver exit $S_RC, sender exit $C_RC"
}
prog_failed() {
  ((C_RC != 0 && C_RC != 124)) || return 1
  echo "   sender (exit $C_RC): $(head -n 4 "$WORK/$1.client" | tr '\n' ' ')"
  echo "   receiver (exit $S_RC): $(head -n 4 "$WORK/$1.server" | tr '\n' ' ')"
  ((S_RC != 0))
}
rdmacm_main "$@"
