# Sourced by the lab scripts: counting the QPs a test left behind.
#   qps_left          how many QPs exist, but the kernel's GSI ones
#   check_no_qps WHERE  none may be left: else prints them, sets fail=1
qps_left() { rdma resource show qp 2>/dev/null | grep -cvE "type GSI|^$"; }
check_no_qps() {
  local n
  n=$(qps_left)
  [[ $n -eq 0 ]] || { echo "FAIL ($1): $n QP(s) left"; rdma resource show qp; fail=1; }
}
