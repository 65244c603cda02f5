# SPDX-License-Identifier: MIT
# Sourced by the lab scripts: counting the QPs a test left behind, the
# processes a script starts, and the two "hosts" snapshotted at once.
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
# start NAME CMD...: CMD in the background, its output in $w/NAME.out, its
# pid in $last and in procs (so the cleanup ends it).
start() {
  local name=$1
  shift
  "$@" >"$w/$name.out" 2>&1 &
  last=$!
  procs+=("$last")
}

# inspect_both_at DIR AT: the lab's two "hosts" snapshotted at one agreed
# time, as a job's nodes would be: qp-inspect on QPC_DEV0 as node-a and on
# QPC_DEV1 as node-b (rxe works in the initial network namespace only, so a
# device stands for a host), both with --at AT (epoch seconds), into
# DIR/node-a.json and DIR/node-b.json, their output in $w/a.out and $w/b.out.
# Uses $qi (the qp-inspect binary). Fails saying which one exited non-zero.
inspect_both_at() {
  local dir=$1 at=$2 a b
  "$qi" -d "$QPC_DEV0" --host node-a --at "$at" -o "$dir/%h.json" >"$w/a.out" 2>&1 &
  a=$!
  "$qi" -d "$QPC_DEV1" --host node-b --at "$at" -o "$dir/%h.json" >"$w/b.out" 2>&1 &
  b=$!
  wait "$a" || { echo "qp-inspect on node-a exited $?: $(tail -n 1 "$w/a.out")"; wait "$b"; return 1; }
  wait "$b" || { echo "qp-inspect on node-b exited $?: $(tail -n 1 "$w/b.out")"; return 1; }
}

cleanup_scratch_and_procs() {
  for p in "${procs[@]}"; do
    kill -CONT "$p" 2>/dev/null
    kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$w"
}
