#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# RoCE path faults between two real qp-connect processes (issue 31 item 2),
# each induced with `ip` in the lab (server on QPC_DEV0/QPC_NETDEV0, client
# on QPC_DEV1/QPC_NETDEV1 -> QPC_IP0). Each scenario asserts both exit
# statuses, the rule named and the time to report (the whole pair, from the
# server's start).
#
#   route_removed  the client's routes to the server's address removed (its
#                  table and the subnet route on its netdev): the kernel
#                  would assume the peer on the link. The client names
#                  route-missing before any modify (exit 5); the server hears
#                  the abort.
#   neigh_wrong    the server's neighbour entry for the client's address is
#                  a wrong permanent MAC (a stale entry after a NIC swap):
#                  the server names neighbour-mac-mismatch with both MACs
#                  (exit 5); before issue 31 both sides waited for the
#                  deadline (exit 7).
#   neigh_failed   the client's neighbour entry for the server's address
#                  FAILED (the server's netdev ignores ARP, arp_ignore=8, and
#                  a ping on the client's netdev went unanswered): the client
#                  names neighbour-failed (exit 5).
#   mtu_lowered    the client's netdev MTU lowered to 1200: both connect with
#                  the negotiated path MTU 1024 (exit 0), the client's RoCE
#                  path line showing the MTU 1200 it checked.
#   mtu_forced     the same MTU, both sides forcing -m 2048: refused on both
#                  sides before any modify (exit 5), the client naming
#                  mtu-above-netdev against its netdev's 1200 bytes besides
#                  mtu-above-active.
#   link_down      the client's netdev set down before the run (both rxe
#                  ports go DOWN): both sides stop at open (exit 3) naming
#                  the port DOWN, as before issue 31 (kept so).
# Each pair reports within 15 s, before the 20 s --timeout a side that missed
# the fault would wait out (fault_lab_common.sh).
#
# Usage: path_fault_lab.sh QP_CONNECT SCENARIO
source "$(dirname "$0")/fault_lab_common.sh" "$@"

mac0=$(cat "/sys/class/net/$QPC_NETDEV0/address")
mac1=$(cat "/sys/class/net/$QPC_NETDEV1/address")

case $scenario in
  route_removed)
    # The lab routes each address through a per-netdev table (101 for the
    # client's netdev) and the connected subnet route; both go.
    ip route del "$QPC_IP0" dev "$QPC_NETDEV1" table 101 || exit 1
    ip route del 10.99.0.0/24 dev "$QPC_NETDEV1" || exit 1
    ip route get "$QPC_IP0" from "$QPC_IP1" oif "$QPC_NETDEV1"
    run_pair 15 4 5 \
      --grep-client "error route-missing .*no route in any table reaches $QPC_IP0 through $QPC_NETDEV1" \
      --grep-server "peer aborted" \
      -- -n 20 --timeout 20
    ;;
  neigh_wrong)
    ip neigh replace "$QPC_IP1" lladdr 02:00:00:00:00:99 dev "$QPC_NETDEV0" nud permanent || exit 1
    run_pair 15 5 4 \
      --grep-server "error neighbour-mac-mismatch .*02:00:00:00:00:99 PERMANENT.*$QPC_NETDEV1 $mac1" \
      --grep-client "peer aborted" \
      -- -n 20 --timeout 20
    ;;
  neigh_failed)
    ip neigh del "$QPC_IP0" dev "$QPC_NETDEV1" || exit 1
    sysctl -qw "net.ipv4.conf.$QPC_NETDEV0.arp_ignore=8" || exit 1
    busybox ping -c 1 -W 1 -I "$QPC_NETDEV1" "$QPC_IP0" >/dev/null 2>&1
    for ((i = 0; i < 100; i++)); do
      ip neigh show "$QPC_IP0" dev "$QPC_NETDEV1" | grep -q FAILED && break
      sleep 0.1
    done
    ip neigh show "$QPC_IP0" dev "$QPC_NETDEV1"
    ip neigh show "$QPC_IP0" dev "$QPC_NETDEV1" | grep -q FAILED ||
      { echo "FAIL: set-up: the neighbour entry did not fail"; exit 1; }
    run_pair 15 4 5 \
      --grep-client "error neighbour-failed .*$QPC_IP0 dev $QPC_NETDEV1 FAILED" \
      --grep-server "peer aborted" \
      -- -n 20 --timeout 20
    ;;
  mtu_lowered)
    ip link set "$QPC_NETDEV1" mtu 1200 || exit 1
    run_pair 15 0 0 \
      --grep-client "RoCE path: $QPC_NETDEV1 \($mac1, untagged, MTU 1200\) -> $QPC_IP0: route dev $QPC_NETDEV1 table 101, on link; neighbour $QPC_IP0 $mac0 PERMANENT" \
      --grep-server "RoCE path: $QPC_NETDEV0 \($mac0, untagged, MTU 1500\)" \
      -- -n 20 --timeout 20
    ;;
  mtu_forced)
    ip link set "$QPC_NETDEV1" mtu 1200 || exit 1
    run_pair 15 5 5 \
      --grep-client "error mtu-above-netdev .*path_mtu 2048 plus 96 bytes of RoCE headers exceeds $QPC_NETDEV1 MTU 1200" \
      --grep-server "error mtu-above-active" \
      -- -n 20 --timeout 20 -m 2048
    ;;
  link_down)
    ip link set "$QPC_NETDEV1" down || exit 1
    run_pair 15 3 3 \
      --grep-client "open failed: .*$QPC_DEV1 port 1 is DOWN, not ACTIVE" \
      --grep-server "open failed: .*$QPC_DEV0 port 1 is DOWN, not ACTIVE" \
      -- -n 20 --timeout 20
    ;;
  *)
    echo "path_fault_lab: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
