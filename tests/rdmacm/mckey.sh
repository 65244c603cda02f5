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
# everything both sides print. Usage and modes: rdmacm_common.sh, with an
# optional variant first:
#   mckey.sh [sendonly|ipv6] MODE ...
#   sendonly  the sender joins as a send-only full member (`-o`:
#             rdma_join_multicast_ex with RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER):
#             no IP group, no QP attached on its side
#   ipv6      the group ff15::1 (an IPv6 group: MLD, the MGID is the group),
#             both ends bound to their netdev's IPv6 link-local address
#             (QPC_NETDEV0/1); the addresses MODE names are not used, so
#             only for rxe_lib: the kernel's rdma_cm refuses an IPv6 group
#             on a RoCE v2 GID (mckey: "failure joining: Unknown error 524",
#             ENOTSUPP), the library joins it
set -uo pipefail
MCKEY_VARIANT=
case ${1:-} in sendonly | ipv6) MCKEY_VARIANT=$1 && shift ;; esac
PROG_BIN=mckey
. "$(dirname "$0")/rdmacm_common.sh"

MCKEY_GROUP=239.1.1.1
MCKEY_MGID=::ffff:239.1.1.1
MCKEY_SENDER=(-s)
case $MCKEY_VARIANT in
  sendonly) MCKEY_SENDER=(-s -o) ;;
  ipv6) MCKEY_GROUP=ff15::1 MCKEY_MGID=ff15::1 ;;
esac
# link_local NETDEV: its IPv6 link-local address with the scope, ADDR%NETDEV.
link_local() {
  local line
  line=$(ip -6 -o addr show dev "$1" scope link) || return 1
  line=${line#*inet6 }
  echo "${line%%/*}%$1"
}
prog_pair() {
  local r=$2 s=$3
  if [[ $MCKEY_VARIANT == ipv6 ]]; then
    r=$(link_local "$QPC_NETDEV0") && s=$(link_local "$QPC_NETDEV1") || die "no IPv6 link-local address"
  fi
  READY_LINE="mckey: joined"
  # Port 0: mckey listens on none; READY_LINE says when it has joined.
  run_pair "$1" "$r" 0 60 -- stdbuf -oL mckey -m "$MCKEY_GROUP" -b "$r" \
    -- mckey -m "$MCKEY_GROUP" -b "$s" "${MCKEY_SENDER[@]}"
  READY_LINE=
}
prog_ok() {
  local ok=0 f
  ((S_RC == 0 && C_RC == 0)) || { echo "   mckey exit: receiver $S_RC, sender $C_RC (want 0, 0)"; ok=1; }
  ((LISTENED)) || { echo "   the receiver never said it joined"; ok=1; }
  for f in server client; do
    grep -q "^mckey: joined dgid: $MCKEY_MGID " "$WORK/$1.$f" ||
      { echo "   the $f did not join $MCKEY_MGID"; ok=1; }
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
