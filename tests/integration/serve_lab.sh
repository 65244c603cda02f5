#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qp-connect --count and --serve (issue 14, a serving mode), server on
# QPC_DEV0, clients on QPC_DEV1, one after another:
#  1. --count 4: clients 1, 2 and 4 connect (exit 0); client 3 asks for UC
#     against the server's RC (validation, exit 5 on both sides). The server
#     reports each peer, goes on after the failure, and exits 5 (the first
#     failed peer's status) after the fourth.
#  2. --serve, SIGINT while a client's traffic runs (-D 60): the server exits
#     130, the client fails with the server's abort ("server interrupted").
#  3. --serve, SIGTERM while waiting for a peer (--timeout 600): exit 143.
#  4. --count 2 --json: two documents, one per line, "peer":1 then "peer":2.
#  5. --count 1 --timeout 6 with no client for a while: the accept timing out
#     is no peer (the server opens again, reports nothing); a client right
#     after it opened again (inside the 6 s of its exchange, room for a
#     loaded emulated guest to start the client): peer 1, exit 0.
#  6. --serve, SIGTERM during a client's traffic: the server exits 143, the
#     client fails quoting "server interrupted (SIGTERM)".
#  7. --serve -e (completion events on both sides), SIGINT during traffic:
#     exit 130, the client quotes the reason.
#  8. --serve, SIGINT while the server waits for a connected client's hello
#     (a bare TCP connection that sends nothing): exit 130, and what the
#     server sent on it is its hello then an early abort carrying
#     "server interrupted (SIGINT)" (docs/oob.md, "Cancelling").
# After each, `rdma resource show qp` lists no QP.
#
# Usage: serve_lab.sh QP_CONNECT
set -uo pipefail
bin=$1
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
spid=""
cleanup() {
  [[ -n $spid ]] && kill -9 "$spid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
. "$(dirname "$0")/lab_qps.sh"
# Until FILE has a line matching RE (written by a process still running);
# gives up after 120 s.
wait_for() {
  local i
  for ((i = 0; i < 1200; i++)); do
    grep -Eq "$2" "$1" && return 0
    sleep 0.1
  done
  return 1
}
show() { echo "--- $1:"; cat "$2"; }

check_no_qps "before"

# 1. --count 4, one failing peer in the middle.
port=18600
"$bin" -d "$QPC_DEV0" --count 4 -p "$port" -n 20 --timeout 20 \
  >"$work/s1.out" 2>"$work/s1.err" &
spid=$!
for k in 1 2 3 4; do
  extra=() want=0
  if [[ $k == 3 ]]; then extra=(--transport uc) want=5; fi
  "$bin" -d "$QPC_DEV1" -n 20 --timeout 20 "${extra[@]}" "$QPC_IP0:$port" >"$work/c$k.out" 2>&1
  rc=$?
  show "client $k ${extra[*]} (exit $rc)" "$work/c$k.out"
  [[ $rc == "$want" ]] || bad "client $k exit $rc, want $want"
done
wait "$spid"; rc=$?; spid=""
show "server --count 4 stdout (exit $rc)" "$work/s1.out"
show "server --count 4 stderr" "$work/s1.err"
[[ $rc == 5 ]] || bad "server --count 4 exit $rc, want 5 (peer 3's validation)"
for k in 1 2 4; do
  grep -q "^qp-connect: peer $k: connected 1 rc QP(s)" "$work/s1.out" || bad "no 'peer $k: connected'"
done
grep -q "^qp-connect: peer 3: failed (exit 5); serving the next" "$work/s1.err" ||
  bad "no 'peer 3: failed (exit 5)'"
grep -q "^qp-connect: served 4 peer(s), 1 failed" "$work/s1.out" || bad "no summary line"
check_no_qps "after --count 4"

# 2. --serve, SIGINT during a client's traffic.
port=18601
"$bin" -v -d "$QPC_DEV0" --serve -p "$port" --timeout 60 >"$work/s2.out" 2>"$work/s2.err" &
spid=$!
"$bin" -d "$QPC_DEV1" -D 60 --timeout 60 "$QPC_IP0:$port" >"$work/c5.out" 2>&1 &
cpid=$!
wait_for "$work/s2.out" "^qp-connect: traffic:" || bad "the server never reached the traffic"
kill -INT "$spid"
wait "$spid"; rc=$?; spid=""
wait "$cpid"; crc=$?
show "server --serve stdout (exit $rc)" "$work/s2.out"
show "server --serve stderr" "$work/s2.err"
show "client -D 60 (exit $crc)" "$work/c5.out"
[[ $rc == 130 ]] || bad "server --serve after SIGINT: exit $rc, want 130"
grep -q "peer 1: interrupted by SIGINT" "$work/s2.err" || bad "server: no 'peer 1: interrupted by SIGINT'"
[[ $crc != 0 ]] || bad "client: exit 0 after the server was interrupted"
grep -q "server interrupted (SIGINT)" "$work/c5.out" || bad "client: the abort is not named"
check_no_qps "after SIGINT"

# 3. --serve, SIGTERM while waiting for a peer (no client; the deadline is far).
port=18602
"$bin" -v -d "$QPC_DEV0" --serve -p "$port" --timeout 600 >"$work/s3.out" 2>"$work/s3.err" &
spid=$!
wait_for "$work/s3.out" "^qp-connect: opened $QPC_DEV0" || bad "the server never opened the device"
kill -TERM "$spid"
wait "$spid"; rc=$?; spid=""
show "server --serve, no peer, stdout (exit $rc)" "$work/s3.out"
show "server --serve, no peer, stderr" "$work/s3.err"
[[ $rc == 143 ]] || bad "server --serve after SIGTERM: exit $rc, want 143"
grep -q "SIGTERM: stopped serving after 0 peer(s)" "$work/s3.err" || bad "no SIGTERM summary"
check_no_qps "after SIGTERM"

# 4. --count 2 --json: JSON Lines, one document per peer.
port=18603
"$bin" -d "$QPC_DEV0" --count 2 --json -p "$port" -n 20 --timeout 20 >"$work/s4.out" 2>"$work/s4.err" &
spid=$!
for k in 1 2; do
  "$bin" -d "$QPC_DEV1" -n 20 --timeout 20 "$QPC_IP0:$port" >"$work/c4$k.out" 2>&1 ||
    bad "json client $k exit $?"
done
wait "$spid"; rc=$?; spid=""
show "server --count 2 --json stdout (exit $rc)" "$work/s4.out"
show "server --count 2 --json stderr" "$work/s4.err"
[[ $rc == 0 ]] || bad "server --count 2 --json exit $rc, want 0"
[[ $(wc -l <"$work/s4.out") == 2 ]] || bad "--json: not two lines"
for k in 1 2; do
  sed -n "${k}p" "$work/s4.out" | grep -q '^{"schema_version":1,"result":"ok",.*"role":"server","peer":'"$k"',' ||
    bad "--json line $k: not peer $k's ok document"
done
# Each line against docs/schemas/qp-connect.schema.json (docs/json.md).
root=$(cd "$(dirname "$0")/../.." && pwd)
if python3 -c 'import jsonschema' 2>/dev/null; then
  "$root/tests/schemas/check_json.py" "$root/docs/schemas" qp-connect.schema.json --lines "$work/s4.out" ||
    bad "--json lines do not match docs/schemas/qp-connect.schema.json"
fi
check_no_qps "after --count 2 --json"

# 5. No client within --timeout is not a peer.
port=18604
"$bin" -v -d "$QPC_DEV0" --count 1 -p "$port" -n 20 --timeout 6 >"$work/s5.out" 2>"$work/s5.err" &
spid=$!
opened=0
for ((i = 0; i < 1200; i++)); do
  opened=$(grep -c "^qp-connect: opened $QPC_DEV0" "$work/s5.out")
  ((opened >= 2)) && break
  sleep 0.1
done
((opened >= 2)) || bad "the server did not open again after an accept timed out"
"$bin" -d "$QPC_DEV1" -n 20 --timeout 20 "$QPC_IP0:$port" >"$work/c51.out" 2>&1 || bad "client exit $?"
wait "$spid"; rc=$?; spid=""
show "server --count 1 --timeout 6 stdout (exit $rc)" "$work/s5.out"
show "server --count 1 --timeout 6 stderr" "$work/s5.err"
[[ $rc == 0 ]] || bad "server --count 1 --timeout 6 exit $rc, want 0"
grep -q "^qp-connect: peer 1: connected" "$work/s5.out" || bad "no 'peer 1: connected'"
grep -q "failed" "$work/s5.err" && bad "an accept that timed out was reported"
check_no_qps "after --count 1 --timeout 6"

# 6 and 7. A signal during a client's traffic: the server exits 128 + the
# signal, the client fails naming it, no QP is left.
# signal_during_traffic CASE PORT SIGNAL STATUS [qp-connect options for both]
signal_during_traffic() {
  local n=$1 port=$2 sig=$3 want=$4 rc crc
  shift 4
  "$bin" -v -d "$QPC_DEV0" --serve -p "$port" --timeout 60 "$@" >"$work/s$n.out" 2>"$work/s$n.err" &
  spid=$!
  "$bin" -d "$QPC_DEV1" -D 60 --timeout 60 "$@" "$QPC_IP0:$port" >"$work/c$n.out" 2>&1 &
  cpid=$!
  wait_for "$work/s$n.out" "^qp-connect: traffic:" || bad "$n: the server never reached the traffic"
  sleep 0.5  # well inside the rounds
  kill -"$sig" "$spid"
  wait "$spid"; rc=$?; spid=""
  wait "$cpid"; crc=$?
  show "$n: server --serve $* stdout (exit $rc)" "$work/s$n.out"
  show "$n: server --serve $* stderr" "$work/s$n.err"
  show "$n: client -D 60 $* (exit $crc)" "$work/c$n.out"
  [[ $rc == "$want" ]] || bad "$n: server --serve $* after SIG$sig: exit $rc, want $want"
  grep -q "peer 1: interrupted by SIG$sig" "$work/s$n.err" || bad "$n: server: no 'peer 1: interrupted by SIG$sig'"
  [[ $crc != 0 ]] || bad "$n: client: exit 0 after the server was interrupted"
  grep -q "the peer aborted: server interrupted (SIG$sig)" "$work/c$n.out" ||
    bad "$n: client: the abort is not quoted"
  check_no_qps "after SIG$sig during traffic $*"
}
signal_during_traffic 6 18605 TERM 143
signal_during_traffic 7 18606 INT 130 -e

# 8. SIGINT while waiting for a connected client's hello.
port=18607
"$bin" -v -d "$QPC_DEV0" --serve -p "$port" --timeout 60 >"$work/s8.out" 2>"$work/s8.err" &
spid=$!
wait_for "$work/s8.out" "^qp-connect: opened $QPC_DEV0" || bad "8: the server never opened the device"
wait_listening "$port"
connected=0
{ exec 3<>"/dev/tcp/$QPC_IP0/$port"; } 2>/dev/null && connected=1
((connected)) || bad "8: could not connect to the server"
sleep 0.5  # the server has accepted and sent its hello; ours never comes
kill -INT "$spid"
wait "$spid"; rc=$?; spid=""
((connected)) && timeout 5 cat <&3 >"$work/r8.bin"
exec 3<&-
show "8: server --serve, a silent client, stdout (exit $rc)" "$work/s8.out"
show "8: server --serve, a silent client, stderr" "$work/s8.err"
echo "--- 8: what the server sent: $(wc -c <"$work/r8.bin") bytes"
[[ $rc == 130 ]] || bad "8: server after SIGINT: exit $rc, want 130"
grep -aq "server interrupted (SIGINT)" "$work/r8.bin" ||
  bad "8: the server's early abort with its reason did not reach the client"
check_no_qps "after SIGINT waiting for a hello"
exit $fail
