#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qp-inspect and qp-validate see the RoCE path facts qp-connect checks
# before RTR (issue 31 item 5): a connected ibv_rc_pingpong pair (server on
# QPC_DEV0, client on QPC_DEV1), both processes stopped so that the QPs stay
# connected and idle, then a path fault induced with `ip`; the snapshot
# records each QP's path (its "paths" member) and qp-validate's live verdict
# names roce-path-broken.
#
#   neigh_wrong   the client's neighbour entry for the server's address made
#                 a wrong permanent MAC: the client's QP is named with both
#                 MACs and the fix.
#   addr_removed  the client's address removed from its netdev (its IPv4
#                 RoCE v2 GID gone): the client's QP is named (its port has
#                 no routable address any more), and the server's (the
#                 address it sends to is gone).
#
# Usage: inspect_path_lab.sh QP_INSPECT QP_VALIDATE SCENARIO
set -uo pipefail
qi=${1:?usage: inspect_path_lab.sh QP_INSPECT QP_VALIDATE SCENARIO}
qv=${2:?usage: inspect_path_lab.sh QP_INSPECT QP_VALIDATE SCENARIO}
scenario=${3:?usage: inspect_path_lab.sh QP_INSPECT QP_VALIDATE SCENARIO}
: "${QPC_DEV1:?not in the lab: QPC_DEV1 unset}"
. "$(dirname "$0")/../integration/lab_qps.sh"  # wait_listening

scratch_and_procs
fail=0
check() {  # file text: the text must be in the file
  grep -qF -- "$2" "$1" || { echo "FAIL ($scenario): '$2' not in ${1##*/}"; fail=1; }
}

ibv_rc_pingpong -d "$QPC_DEV0" -g "$QPC_GID0" -n 100000000 >"$w/server.out" 2>&1 &
server=$!
procs+=("$server")
wait_listening 18515 || exit 1
ibv_rc_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" -n 100000000 "$QPC_IP0" >"$w/client.out" 2>&1 &
client=$!
procs+=("$client")
for ((i = 0; i < 300; i++)); do
  (($(rdma resource show qp 2>/dev/null | grep -cE "type RC state RTS") >= 2)) && break
  sleep 0.2
done
sleep 1
# Stopped, the programs neither post nor exit: the QPs stay connected.
kill -STOP "$server" "$client"
sleep 0.5
mac0=$(cat "/sys/class/net/$QPC_NETDEV0/address")
case $scenario in
  neigh_wrong)
    ip neigh replace "$QPC_IP0" lladdr 02:00:00:00:00:99 dev "$QPC_NETDEV1" nud permanent || exit 1
    ;;
  addr_removed)
    ip addr del "$QPC_IP1/24" dev "$QPC_NETDEV1" || exit 1
    ;;
  *)
    echo "inspect_path_lab: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
"$qi" -o "$w/snap.json" >"$w/inspect.out" 2>&1 || { echo "FAIL: qp-inspect exited $?"; cat "$w/inspect.out"; exit 1; }
rc=0
"$qv" "$w/snap.json" >"$w/validate.out" 2>&1 || rc=$?
echo "--- snapshot paths"; sed -n '/"paths"/,$p' "$w/snap.json"
echo "--- qp-validate: exit $rc"; cat "$w/validate.out"
[[ $rc == 1 ]] || { echo "FAIL ($scenario): qp-validate exited $rc, want 1"; fail=1; }
case $scenario in
  neigh_wrong)
    check "$w/snap.json" '"neighbour_mac":"02:00:00:00:00:99"'
    check "$w/snap.json" "\"peer_mac\":\"$mac0\""
    check "$w/validate.out" "roce-path-broken"
    check "$w/validate.out" "the neighbour entry for $QPC_IP0 on $QPC_NETDEV1 is 02:00:00:00:00:99 PERMANENT, but the peer's $QPC_NETDEV0 is $mac0"
    check "$w/validate.out" "ip neigh replace $QPC_IP0 lladdr $mac0 dev $QPC_NETDEV1"
    ;;
  addr_removed)
    check "$w/snap.json" '"source_gone":true'
    check "$w/snap.json" '"destination_gone":true'
    check "$w/validate.out" "roce-path-broken"
    check "$w/validate.out" "$QPC_DEV1 port 1 has no routable RoCE v2 address any more"
    check "$w/validate.out" "'s port has no routable RoCE v2 address any more"
    ;;
esac
exit $fail
