#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GID faults between two real qp-connect processes (issue 31), each induced
# with `ip` in the lab (server on QPC_DEV0, client on QPC_DEV1 -> QPC_IP0).
# Each scenario asserts both exit statuses, the rule or cause named and the
# time to report (the whole pair, from the server's start).
#
#   addr_removed   the client's IPv4 address removed before the run: its
#                  IPv4 RoCE v2 GID is gone. Both sides choose the link-local
#                  pair together and connect (exit 0), and say so.
#   pinned_ll      the client pins -g 0 (its link-local GID) while a routable
#                  pair exists: refused on both sides as before (exit 5,
#                  gid-family-mismatch), the joint choice saying why it did
#                  not follow the pin (gid-pair-none).
#   gid_changed    the client's address removed after the exchange, before
#                  RTR (both sides wait QPC_TEST_PAUSE_BEFORE_RTR_MS): the
#                  client names gid-changed-before-rtr and modifies nothing
#                  (exit 5); the server hears the abort.
# Each pair reports within 15 s, before the 20 s --timeout a side that missed
# the fault would wait out (fault_lab_common.sh).
#
# Usage: gid_fault_lab.sh QP_CONNECT SCENARIO
source "$(dirname "$0")/fault_lab_common.sh" "$@"

. "$(dirname "$0")/link_local_neighbours.sh"

case $scenario in
  addr_removed)
    link_local_neighbours || exit 1
    ip addr del "$QPC_IP1/24" dev "$QPC_NETDEV1" || exit 1
    run_pair 15 0 0 \
      --grep-server "GID pair: local \[0\] fe80::[0-9a-f:]+ roce-v2, remote \[0\] fe80::" \
      --grep-client "GID pair: local \[0\] fe80::[0-9a-f:]+ roce-v2, remote \[0\] fe80::.*no routable pair" \
      -- -n 20 --timeout 20
    ;;
  pinned_ll)
    run_pair 15 5 5 \
      --grep-server "warning gid-pair-none .*routable pair exists" \
      --grep-client "error gid-family-mismatch" \
      -- --timeout 20 -- -- -g 0
    ;;
  gid_changed)
    # Both sides wait 3 s before RTR; the address goes once the client has
    # the peer's description (its -v step), so after the exchange.
    export QPC_TEST_PAUSE_BEFORE_RTR_MS=3000
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    t0=$(date +%s%N)
    "$bin" -d "$QPC_DEV0" --oob tcp -n 20 --timeout 20 >"$work/server.out" 2>&1 &
    spid=$!
    sleep 0.2
    "$bin" -v -d "$QPC_DEV1" --oob tcp -n 20 --timeout 20 "$QPC_IP0" >"$work/client.out" 2>&1 &
    cpid=$!
    for ((i = 0; i < 200; i++)); do
      grep -q "received the peer's description" "$work/client.out" && break
      sleep 0.1
    done
    ip addr del "$QPC_IP1/24" dev "$QPC_NETDEV1"
    wait "$cpid"; got_c=$?
    wait "$spid"; got_s=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "--- server: exit $got_s"; cat "$work/server.out"
    echo "--- client: exit $got_c"; cat "$work/client.out"
    echo "gid_fault_lab: $scenario: the pair reported after ${ms} ms (limit 15 s)"
    rc=0
    [[ $got_c == 5 ]] || { echo "FAIL: client exit $got_c, want 5"; rc=1; }
    [[ $got_s != 0 ]] || { echo "FAIL: server exit 0, want a failure"; rc=1; }
    grep -Eq "error gid-changed-before-rtr .*::ffff:$QPC_IP1.*gone from the table" "$work/client.out" ||
      { echo "FAIL: the client does not name gid-changed-before-rtr"; rc=1; }
    grep -q "peer aborted: its GID changed before RTR" "$work/server.out" ||
      { echo "FAIL: the server does not name the peer's abort"; rc=1; }
    # the abort told at RTR (after the 3 s pause), not the server's 20 s
    # deadline: 15 s, room for a loaded emulated guest
    ((ms <= 15000)) || { echo "FAIL: reported after ${ms} ms, more than 15 s"; rc=1; }
    exit $rc
    ;;
  *)
    echo "gid_fault_lab: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
