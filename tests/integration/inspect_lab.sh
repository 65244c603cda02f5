#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# inspect_lab.sh TOOLS_DIR SHIM SCENARIO: stock programs, unmodified, on
# QPC_DEV0/QPC_DEV1, snapshotted with `qp-inspect -o` while they run and judged
# with `qp-validate SNAPSHOT` (docs/inspect.md). Runs inside tools/lab/lab-run.
#
#   pingpong_ok   ibv_rc_pingpong pair: exit 0, the pair listed with both pids
#   psn_shift     the server under SHIM (rq_psn + 999 at RTR): exit 1,
#                 psn-receiver-ahead with the duplicate evidence
#   rnr_stopped   ib_send_bw receiver SIGSTOPped: exit 1, receiver-not-ready
#                 naming the stopped process
#   peer_killed   ib_send_bw receiver killed: exit 1, peer-qp-gone
#   write_bw_ok   ib_write_bw pair: exit 0
#   rping_ok      rping pair (rdma_cm): exit 0
#   rdmacm_by_gid rping and cmtime (8 connections; the client stopped by
#                 PAUSE_SHIM at its first rdma_disconnect, all connected), both
#                 servers on QPC_IP0 (QPC_DEV0), clients bound to QPC_IP1
#                 (QPC_DEV1); each device snapshotted as a "host" (node-a,
#                 node-b); `qp-validate --json` pairs every connection by the
#                 GID its cm_id's destination names ("gid" in the pair's how),
#                 none ambiguous; the same snapshots without the cm_id addresses
#                 pair none by GID (the control: the GIDs come from the cm_ids)
#   unprivileged  what a user without privileges sees: the same QPs as root;
#                 with /proc hidepid=2 a note instead of process names; from
#                 another PID namespace a note on the pids the kernel withholds
set -uo pipefail

tools=${1:?usage: inspect_lab.sh TOOLS_DIR SHIM SCENARIO [PAUSE_SHIM]}
shim=${2:?usage: inspect_lab.sh TOOLS_DIR SHIM SCENARIO [PAUSE_SHIM]}
scenario=${3:?usage: inspect_lab.sh TOOLS_DIR SHIM SCENARIO [PAUSE_SHIM]}
pause_shim=${4:-}
qi=$tools/qp-inspect/qp-inspect
qv=$tools/qp-validate/qp-validate
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset (run under tools/lab/lab-run)}"

. "$(dirname "$0")/lab_qps.sh"  # scratch_and_procs
scratch_and_procs

fail() {
  echo "FAIL ($scenario): $*" >&2
  for f in "$w"/*.out "$w"/*.err; do
    [[ -s $f ]] && { echo "--- ${f##*/}" >&2; cat "$f" >&2; }
  done
  exit 1
}

# Waits (bounded) until something listens on TCP port $1: a socket whose
# local port it is, in state LISTEN (0A). A TIME_WAIT socket left on the port
# by an earlier program (in a shared boot: an earlier test's qp-connect on
# 18515) once let the stock client start too early ("Couldn't connect").
wait_listen() {
  local hex i
  hex=$(printf ':%04X [0-9A-F:]* 0A ' "$1")
  for ((i = 0; i < 300; i++)); do
    grep -Eqs "$hex" /proc/net/tcp /proc/net/tcp6 && return 0
    sleep 0.1
  done
  fail "nothing listens on port $1 after 30 s"
}

# Waits (bounded) until the tracker lists $1 RC QPs past INIT.
wait_rc() {
  local i n
  for ((i = 0; i < 300; i++)); do
    n=$(rdma resource show qp 2>/dev/null | grep -cE "type RC state (RTR|RTS)")
    ((n >= $1)) && return 0
    sleep 0.2
  done
  fail "fewer than $1 connected RC QPs after 60 s: $(rdma resource show qp 2>&1)"
}

snapshot() {  # extra qp-inspect args
  "$qi" -o "$w/snap.json" "$@" >"$w/inspect.out" 2>"$w/inspect.err" ||
    fail "qp-inspect exited $?"
}

# Runs qp-validate on the snapshot; fails unless it exits $1.
judge() {
  local rc=0
  "$qv" "$w/snap.json" >"$w/validate.out" 2>"$w/validate.err" || rc=$?
  cat "$w/validate.out"
  [[ $rc -eq $1 ]] || fail "qp-validate exited $rc, want $1"
}

expect() {  # file text...
  local f=$1
  shift
  for t in "$@"; do
    grep -qF -- "$t" "$f" || fail "'$t' not in ${f##*/}"
  done
}

pingpong_pair() {  # extra server env (VAR=value or nothing)
  start server env "$@" ibv_rc_pingpong -d "$QPC_DEV0" -g "$QPC_GID0" -n 100000000
  server=$last
  wait_listen 18515
  start client ibv_rc_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" -n 100000000 "$QPC_IP0"
  client=$last
  wait_rc 2
}

perftest_pair() {  # tool
  start server "$1" -d "$QPC_DEV0" -x "$QPC_GID0" -D 120
  server=$last
  wait_listen 18515
  start client "$1" -d "$QPC_DEV1" -x "$QPC_GID1" -D 120 "$QPC_IP0"
  client=$last
  wait_rc 2
  sleep 3  # perftest's warm-up: traffic flows before the snapshot
}

case $scenario in
  pingpong_ok)
    pingpong_pair
    sleep 1
    snapshot
    expect "$w/inspect.out" "$server  ibv_rc_pingpong" "$client  ibv_rc_pingpong" "+SQ"
    judge 0
    expect "$w/validate.out" "pair 1 (mutual qpn" "): sound" "pid $server ibv_rc_pingpong" \
      "pid $client ibv_rc_pingpong" "moving in " "0 errors"
    ;;
  psn_shift)
    pingpong_pair QPC_SHIM_RQ_PSN_ADD=999 LD_PRELOAD="$shim"
    sleep 2
    snapshot --interval 2
    expect "$w/server.out" "psn-shift shim: QP"
    judge 1
    expect "$w/validate.out" "psn-receiver-ahead  rq_psn" "pid $server ibv_rc_pingpong" \
      "pid $client ibv_rc_pingpong" "discarded as a duplicate" "evidence: duplicate_request" \
      "rq_psn frozen at" "fix: Set the receiver's rq_psn"
    ;;
  rnr_stopped)
    perftest_pair ib_send_bw
    rnr=/sys/class/infiniband/$QPC_DEV0/ports/1/hw_counters/send_rnr_err
    before=$(<"$rnr")
    kill -STOP "$server"
    # The kernel still fills the receives posted before the stop (a stopped
    # receiver with traffic moving is only a warning); wait for the RNR NAKs.
    for ((i = 0; i < 300; i++)); do
      (($(<"$rnr") > before)) && break
      sleep 0.1
    done
    (($(<"$rnr") > before)) || fail "send_rnr_err did not rise within 30 s of SIGSTOP"
    snapshot
    expect "$w/inspect.out" "T (stopped)"
    judge 1
    expect "$w/validate.out" "receiver-not-ready  recv_wr" \
      "receiver not ready: pid $server (ib_send_bw) is stopped" "evidence: send_rnr_err +" \
      "kill -CONT $server"
    ;;
  peer_killed)
    perftest_pair ib_send_bw
    kill -9 "$server"
    wait "$server" 2>/dev/null
    sleep 1
    snapshot
    judge 1
    expect "$w/validate.out" "peer-qp-gone  rqpn" "the peer QP no longer exists" \
      "pid $client ib_send_bw" "evidence: completer_retry_err +"
    ;;
  write_bw_ok)
    perftest_pair ib_write_bw
    snapshot
    judge 0
    expect "$w/validate.out" "): sound" "pid $server ib_write_bw" "pid $client ib_write_bw"
    ;;
  rping_ok)
    start server rping -s -a "$QPC_IP0" -C 100000000
    server=$last
    for ((i = 0; ; i++)); do
      rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr $QPC_IP0:7174" && break
      ((i < 200)) || fail "rping server not listening after 20 s"
      sleep 0.1
    done
    start client rping -c -a "$QPC_IP0" -I "$QPC_IP1" -C 100000000
    client=$last
    wait_rc 2
    sleep 1
    snapshot
    judge 0
    expect "$w/validate.out" "): sound" "pid $server rping" "pid $client rping"
    ;;
  rdmacm_by_gid)
    [[ -f $pause_shim ]] || fail "no PAUSE_SHIM given (the fourth argument)"
    cm_listening() {  # ADDR:PORT
      for ((i = 0; ; i++)); do
        rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr $1" && return 0
        ((i < 200)) || fail "nothing listens on $1 (rdma_cm) after 20 s"
        sleep 0.1
      done
    }
    start rping_server rping -s -a "$QPC_IP0" -C 100000000
    cm_listening "$QPC_IP0:7174"
    start rping_client rping -c -a "$QPC_IP0" -I "$QPC_IP1" -C 100000000
    start cmtime_server cmtime -b "$QPC_IP0"
    cm_listening "$QPC_IP0:7471"
    start cmtime_client env LD_PRELOAD="$pause_shim" cmtime -s "$QPC_IP0" -b "$QPC_IP1" -c 8
    cmtime_client=$last
    for ((i = 0; ; i++)); do
      [[ $(awk '{print $3}' "/proc/$cmtime_client/stat" 2>/dev/null) == T ]] && break
      ((i < 600)) || fail "cmtime's client did not reach its first rdma_disconnect in 60 s"
      sleep 0.1
    done
    wait_rc 18
    sleep 1
    mkdir "$w/snaps"
    at=$(($(date +%s) + 2))
    out=$(inspect_both_at "$w/snaps" "$at") || fail "$out"
    grep -h '"dst_addr"' "$w/snaps/node-a.json" | head -n 2
    "$qv" --json "$w/snaps" >"$w/validate.json" 2>"$w/validate.err"
    # The control: the same snapshots without the cm_ids' addresses.
    mkdir "$w/bare"
    for f in node-a node-b; do
      sed -E 's/,"src_addr":"[^"]*"//; s/,"dst_addr":"[^"]*"//' "$w/snaps/$f.json" >"$w/bare/$f.json"
    done
    "$qv" --json "$w/bare" >"$w/bare.json" 2>"$w/bare.err"
    # By command, not pid: the tracker names the thread that made a QP
    # (cmtime makes its QPs on worker threads).
    python3 - "$w/validate.json" "$w/bare.json" <<'PY' || fail "the rdma_cm connections are not all paired by gid"
import json, sys
doc, bare = (json.load(open(f)) for f in sys.argv[1:3])
ours = ("rping", "cmtime")
def mine(d):
    return [p for p in d["pairs"] if p["a"]["comm"] in ours or p["b"]["comm"] in ours]
pairs = mine(doc)
for p in pairs:
    print(f"{p['a']['host']} {p['a']['comm']} {p['a']['pid']} QP {p['a']['qpn']} <-> "
          f"{p['b']['host']} {p['b']['comm']} {p['b']['pid']} QP {p['b']['qpn']}: {p['how']}")
comms = sorted((p["a"]["comm"], p["b"]["comm"]) for p in pairs)
assert comms == [("cmtime", "cmtime")] * 8 + [("rping", "rping")], comms
assert all("gid" in p["how"] for p in pairs), [p["how"] for p in pairs]
assert all({p["a"]["host"], p["b"]["host"]} == {"node-a", "node-b"} for p in pairs)
lone = [w for w in doc["without_peer"] if w["qp"]["comm"] in ours]
assert not lone, lone
assert doc["job_summary"]["ambiguous"] == 0, doc["job_summary"]
control = mine(bare)
assert control and not any("gid" in p["how"] for p in control), [p["how"] for p in control]
print(f"{len(pairs)} rdma_cm pairs, every one by gid; without the cm_id addresses "
      f"{len(control)} pairs, none by gid")
PY
    ;;
  unprivileged)
    pingpong_pair
    nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    # No privilege needed: the same QPs, pids and commands as root sees.
    "${nobody[@]}" "$qi" >"$w/nobody.out" 2>"$w/nobody.err" || fail "qp-inspect as nobody exited $?"
    expect "$w/nobody.out" "$server  ibv_rc_pingpong" "$client  ibv_rc_pingpong" "[ib_core]"
    # /proc with hidepid=2: other users' processes are hidden; said in a note.
    mount -o remount,hidepid=2 /proc || fail "cannot remount /proc with hidepid=2"
    "${nobody[@]}" "$qi" >"$w/hidden.out" 2>"$w/hidden.err" || fail "qp-inspect (hidepid) exited $?"
    mount -o remount,hidepid=0 /proc
    expect "$w/hidden.out" "$server  ?" "note: /proc/PID/stat of 2 QP owner(s) could not be read"
    # Another PID namespace: the kernel withholds the owners' pids; a note
    # says so (never rows that look like ownerless QPs without a word).
    unshare --pid --fork --mount-proc "$qi" >"$w/ns.out" 2>"$w/ns.err" ||
      fail "qp-inspect in a new PID namespace exited $?"
    expect "$w/ns.out" "note: 2 QP(s) have no pid" "outside this process's PID namespace"
    cat "$w/nobody.out" "$w/hidden.out" "$w/ns.out"
    ;;
  *)
    echo "inspect_lab.sh: unknown scenario '$scenario'" >&2
    exit 2
    ;;
esac
echo "PASS ($scenario)"
