#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mc_probe (mc_probe.c) through the library on rxe0's address, the kernel CM
# removed (issue 39): multicast's refusals, the JOIN event's param.ud, the IP
# group held while joined and dropped by a leave or by rdma_destroy_id
# without one, a QP destroyed while attached, a synchronous id. Passes when
# mc_probe exits 0 and the library's log names no failed ibv_destroy_qp or
# ibv_detach_mcast.
#   mc_probe.sh --probe PATH --qp-cm PATH
set -uo pipefail
: "${QPC_IP0:?not in the lab: QPC_IP0 unset (run under tools/lab/lab-run)}" "${QPC_NETDEV0:?}"
PROBE= QP_CM=
while (($#)); do
  case $1 in
    --probe) PROBE=$2 ;;
    --qp-cm) QP_CM=$2 ;;
    *) echo "usage: mc_probe.sh --probe PATH --qp-cm PATH" && exit 2 ;;
  esac
  shift 2 || exit 2
done
[[ -x $PROBE && -x $QP_CM ]] || { echo "FAIL: --probe '$PROBE' or --qp-cm '$QP_CM' is not built"; exit 1; }
rm -f /dev/infiniband/rdma_cm # the kernel CM out of reach: the library answers
log=$(mktemp /tmp/mc_probe.XXXXXX)
trap 'rm -f "$log"' EXIT
echo "== $QP_CM --log $log -- $PROBE -b $QPC_IP0 -n $QPC_NETDEV0 -m 239.2.2.2 -M 239.2.2.3"
timeout -k 3 60 "$QP_CM" --log "$log" -- "$PROBE" -b "$QPC_IP0" -n "$QPC_NETDEV0" -m 239.2.2.2 -M 239.2.2.3
rc=$?
echo "   mc_probe exit $rc; the library's log:"
sed 's/^/   | /' "$log"
if grep -qE "ibv_destroy_qp|ibv_detach_mcast" "$log"; then
  echo "FAIL: the library failed to detach or destroy the QP"
  exit 1
fi
((rc == 0)) || { echo "FAIL (mc_probe exit $rc)"; exit 1; }
echo "PASS"
