#!/usr/bin/env bash
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
#
# Usage: gid_fault_lab.sh QP_CONNECT SCENARIO
set -uo pipefail
bin=${1:?usage: gid_fault_lab.sh QP_CONNECT SCENARIO}
scenario=${2:?usage: gid_fault_lab.sh QP_CONNECT SCENARIO}
: "${QPC_DEV1:?not in the lab: QPC_DEV1 unset}"
pair=$(dirname "$0")/../integration/qp_connect_pair.sh

# run_pair LIMIT_SECONDS PAIR_ARGS...: qp_connect_pair.sh, timed.
run_pair() {
  local limit=$1
  shift
  local t0 t1 rc
  t0=$(date +%s%N)
  "$pair" "$bin" tcp "$@"
  rc=$?
  t1=$(date +%s%N)
  local ms=$(((t1 - t0) / 1000000))
  echo "gid_fault_lab: $scenario: the pair reported after ${ms} ms (limit ${limit} s)"
  if ((ms > limit * 1000)); then
    echo "FAIL: reported after ${ms} ms, more than ${limit} s"
    rc=1
  fi
  return $rc
}

case $scenario in
  addr_removed)
    ip addr del "$QPC_IP1/24" dev "$QPC_NETDEV1" || exit 1
    run_pair 15 0 0 \
      --grep-server "GID pair: local \[0\] fe80::[0-9a-f:]+ roce-v2, remote \[0\] fe80::" \
      --grep-client "GID pair: local \[0\] fe80::[0-9a-f:]+ roce-v2, remote \[0\] fe80::.*no routable pair" \
      -- -n 20 --timeout 20
    ;;
  pinned_ll)
    run_pair 10 5 5 \
      --grep-server "warning gid-pair-none .*routable pair exists" \
      --grep-client "error gid-family-mismatch" \
      -- --timeout 20 -- -- -g 0
    ;;
  gid_changed)
    export QPC_TEST_PAUSE_BEFORE_RTR_MS=3000
    (sleep 1.5 && ip addr del "$QPC_IP1/24" dev "$QPC_NETDEV1") &
    run_pair 12 any 5 \
      --grep-server "peer aborted" \
      --grep-client "error gid-changed-before-rtr .*::ffff:$QPC_IP1" \
      -- -n 20 --timeout 20
    ;;
  *)
    echo "gid_fault_lab: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
