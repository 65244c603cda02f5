#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mc_probe (mc_probe.c) through the library on rxe0's address, the kernel CM
# removed (issue 39): multicast's refusals, the JOIN event's param.ud, the IP
# group held while joined and dropped by a leave or by rdma_destroy_id
# without one, a QP destroyed while attached, a synchronous id. Passes when
# mc_probe exits 0 and the library's log names no failed ibv_destroy_qp or
# ibv_detach_mcast, and the JOIN's param.ud is the one the kernel's rdma_cm
# gives (UD_WANT, recorded natively in this lab: mc_probe -U with the kernel
# CM, 2026-11-29; QPC_GID0 the GID index).
#   mc_probe.sh [--native] --probe PATH --qp-cm PATH
#   --native  the kernel's rdma_cm instead (kernel CM in place): only the
#             JOIN's param.ud, which must be UD_WANT too (a case of the
#             rxe_native group's boot)
set -uo pipefail
: "${QPC_IP0:?not in the lab: QPC_IP0 unset (run under tools/lab/lab-run)}" "${QPC_NETDEV0:?}"
PROBE= QP_CM= NATIVE=0
while (($#)); do
  case $1 in
    --native) NATIVE=1 && shift && continue ;;
    --probe) PROBE=$2 ;;
    --qp-cm) QP_CM=$2 ;;
    *) echo "usage: mc_probe.sh [--native] --probe PATH --qp-cm PATH" && exit 2 ;;
  esac
  shift 2 || exit 2
done
[[ -x $PROBE && -x $QP_CM ]] || { echo "FAIL: --probe '$PROBE' or --qp-cm '$QP_CM' is not built"; exit 1; }
UD_WANT="ud: qp_num 0xffffff qkey 0x1234567 dlid 0 sl 0 static_rate 0 port 1 is_global 1 sgid_index ${QPC_GID0:-1} hop_limit 64 traffic_class 0 flow_label 0"
ARGS=(-b "$QPC_IP0" -n "$QPC_NETDEV0" -m 239.2.2.2 -M 239.2.2.3)
# check_ud FILE: its "ud:" line is UD_WANT.
check_ud() {
  local got
  got=$(grep '^ud:' "$1")
  [[ $got == "$UD_WANT" ]] && echo "ok: param.ud as rdma_cm gives it: $got" && return 0
  echo "FAIL: param.ud '$got', want '$UD_WANT'"
  return 1
}
if ((NATIVE)); then
  out=$(mktemp /tmp/mc_probe.XXXXXX)
  echo "== natively: $PROBE ${ARGS[*]} -U"
  timeout -k 3 30 "$PROBE" "${ARGS[@]}" -U >"$out" 2>&1
  rc=$?
  sed 's/^/   | /' "$out"
  check_ud "$out" || exit 1
  rm -f "$out"
  ((rc == 0)) || { echo "FAIL (mc_probe exit $rc)"; exit 1; }
  echo "PASS"
  exit 0
fi
rm -f /dev/infiniband/rdma_cm # the kernel CM out of reach: the library answers
log=$(mktemp /tmp/mc_probe.XXXXXX)
out=$(mktemp /tmp/mc_probe.XXXXXX)
trap 'rm -f "$log" "$out"' EXIT
echo "== $QP_CM --log $log -- $PROBE ${ARGS[*]}"
timeout -k 3 60 "$QP_CM" --log "$log" -- "$PROBE" "${ARGS[@]}" >"$out" 2>&1
rc=$?
cat "$out"
check_ud "$out" || rc=1
echo "   mc_probe exit $rc; the library's log:"
sed 's/^/   | /' "$log"
if grep -qE "ibv_destroy_qp|ibv_detach_mcast" "$log"; then
  echo "FAIL: the library failed to detach or destroy the QP"
  exit 1
fi
((rc == 0)) || { echo "FAIL (mc_probe exit $rc)"; exit 1; }
echo "PASS"
