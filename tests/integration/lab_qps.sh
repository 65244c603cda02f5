# SPDX-License-Identifier: MIT
# Sourced by the lab scripts: counting the QPs a test left behind.
#   qps_left          how many QPs exist, but the kernel's GSI ones
#   check_no_qps WHERE  none may be left: else prints them, sets fail=1
#   wait_listening PORT  until a TCP socket listens on PORT (at most 20 s):
#                     a fixed sleep after starting a server is too short when
#                     the host is loaded (seen in CI), and a client that fails
#                     before it connects cannot tell a server not yet there
qps_left() { rdma resource show qp 2>/dev/null | grep -cvE "type GSI|^$"; }
check_no_qps() {
  local n
  n=$(qps_left)
  [[ $n -eq 0 ]] || { echo "FAIL ($1): $n QP(s) left"; rdma resource show qp; fail=1; }
}
wait_listening() {
  local i
  for ((i = 0; i < 400; i++)); do
    ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.05
  done
  echo "FAIL: nothing listens on port $1 after 20 s"
  fail=1
  return 1
}

# A scratch directory in $w and the processes a script starts, in procs (each
# continued if stopped, then killed), all gone when the script exits.
scratch_and_procs() {
  w=$(mktemp -d)
  procs=()
  trap cleanup_scratch_and_procs EXIT
}
cleanup_scratch_and_procs() {
  for p in "${procs[@]}"; do
    kill -CONT "$p" 2>/dev/null
    kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$w"
}
