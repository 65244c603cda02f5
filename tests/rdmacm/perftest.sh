#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stock perftest over rdma_cm (`-R`): perftest.sh ib_send_bw|ib_write_bw MODE ...
# Server `PROG -R -d rxe0 -n 5 -s 4096 -F --source_ip SERVER_ADDR`, client
# `PROG -R -d rxe1 -n 5 -s 4096 -F --source_ip CLIENT_ADDR SERVER_ADDR`
# (port 18515, perftest's default). Seen in the lab with an LD_PRELOAD shim
# logging the rdma_cm calls: perftest 4.5 makes TWO rdma_cm connections on
# that port one after the other (its exchange channel, then the test QP); the
# server binds and listens on 0.0.0.0:18515 twice (the second listener after
# the first is destroyed) whatever --source_ip says, and the client resolves
# SERVER_ADDR without a source address (natively both ends then land on
# rxe0; -d only names the device in the report). Success: both exit 0 and
# print their result row. Deterministic output: the settings both report
# (connection type, QPs, MTU, link type, the data exchange method) and the
# result row's size and iterations (not the bandwidth, not QPNs, PSNs or
# GIDs). Usage and modes: rdmacm_common.sh.
set -uo pipefail
PROG_BIN=${1:?usage: perftest.sh ib_send_bw|ib_write_bw MODE ...}
shift
case $PROG_BIN in ib_send_bw | ib_write_bw) ;; *) echo "FAIL: not a perftest bw program: $PROG_BIN"; exit 1 ;; esac
ITERS=5
. "$(dirname "$0")/rdmacm_common.sh"

prog_pair() {
  run_pair "$1" "$2" 18515 40 -- "$PROG_BIN" -R -d "$QPC_DEV0" -n "$ITERS" -s 4096 -F --source_ip "$2" \
    -- "$PROG_BIN" -R -d "$QPC_DEV1" -n "$ITERS" -s 4096 -F --source_ip "$3" "$2"
}
# The result row: "#bytes #iterations BW peak BW average MsgRate".
result_row() { grep -E '^ *4096 +[0-9]+ +[0-9.]+' "$1" | awk '{ print "result: " $1 " bytes, " $2 " iterations" }'; }
prog_ok() {
  local ok=0 f
  ((S_RC == 0 && C_RC == 0)) || { echo "   $PROG_BIN exit: server $S_RC, client $C_RC (want 0, 0)"; ok=1; }
  for f in server client; do
    [[ -n $(result_row "$WORK/$1.$f") ]] || { echo "   the $f printed no result row"; ok=1; }
  done
  return $ok
}
prog_digest() {
  local f
  for f in server client; do
    grep -E '^ *(Dual-port|Number of qps|Connection type|Using SRQ|Mtu|Link type|Data ex\. method|CQ Moderation|Max inline data|TX depth|RX depth|ibv_wr\* API|.* BW Test)' \
      "$WORK/$1.$f" | sed -E "s/^ +//; s/ +/ /g; s/^/$f: /"
    result_row "$WORK/$1.$f" | sed "s/^/$f: /"
  done
  echo "server exit $S_RC, client exit $C_RC"
}
prog_failed() {
  ((C_RC != 0 && C_RC != 124)) || return 1
  echo "   client (exit $C_RC): $(grep -v '^ *$' "$WORK/$1.client" | head -n 3 | tr '\n' ' ')"
  echo "   server (exit $S_RC): $(grep -v '^ *$' "$WORK/$1.server" | head -n 3 | tr '\n' ' ')"
  ((S_RC != 0))
}
rdmacm_main "$@"
