#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 29: the FAILURE behaviour of the librdmacm-compatible library
# (docs/rdmacm.md, "Failures, as rdma_cm reports them"), in the lab, on the
# management network (mgmt_net.sh: 10.77.0.1 on mgmt0, 10.77.0.2 on mgmt1, no
# RDMA device) with the kernel CM removed, every program started through the
# wrapper `qp-cm --devices MAP --log LOG [--timeout SECONDS] [--psk-file KEY] --`
# (MAP: 10.77.0.1=rxe0:1 for the server, 10.77.0.2=rxe1:1 for the client).
#
#   failures.sh CASE[,CASE...] --cm-events PATH --qp-cm PATH [--libdir DIR]
#
# CASE (each a CTest, lab_rdmacm_fail_CASE; `all`, or a comma-separated
# list, runs them in one boot, `all` as CTest does: the fixture test
# lab_rdmacm_fail_group, docs/lab.md "Groups"):
#   dead_peer         the server (cm_events -s -K) SIGKILLs itself right after
#                     printing CONNECT_REQUEST, before the accept: the client
#                     prints UNREACHABLE with a negative status (documented:
#                     -ECONNRESET, -104) and exits 3 in under 7 s (the link
#                     closes; no waiting for the 10 s answer timeout)
#   stopped_peer      the server is stopped (kill -STOP) (a) while it holds
#                     the request (cm_events -s -w 30: it sleeps before the
#                     accept) and (b) right after it listens (its HELLO never
#                     comes); the client, with `qp-cm --timeout 2s`, prints
#                     UNREACHABLE status -110 (ETIMEDOUT) and exits 3 within
#                     2-10 s; then the server is continued and killed
#   slow_accept       the server's program holds the request 5 s before it
#                     accepts (cm_events -s -w 5), alive; the client, with
#                     `qp-cm --timeout 2s`, still connects (the server's
#                     library tells it the request is held: MRA, as the IB
#                     CM does): both exit 0 after 5-18 s, no UNREACHABLE
#   native_peer       a native cm_events server (the kernel's rdma_cm, started
#                     before the kernel CM is taken away) listens on rxe0's
#                     address; a client through the library asks it: REJECTED
#                     status 8 (what a native client gets where nobody
#                     listens: the native server has no TCP port), exit 3,
#                     under 7 s, the log says "nobody listens at"; the native
#                     server saw no event
#   unanswered_dreq   the server's program destroys its id on DISCONNECTED
#                     without rdma_disconnect (cm_events -s -N); the client,
#                     `qp-cm --timeout 8s`, still gets DISCONNECTED from the
#                     DREP its library sends at the destroy, both exit 0,
#                     under 3 s after the server's destroy (not when the
#                     server exits 6 s later, nor after the 8 s fallback),
#                     and its log has no "no DREP from"
#   listener_gone     the server's program destroys its listening id while a
#                     request waits unseen (cm_events -s -L 3); the client
#                     (`--timeout 2s`: held by MRAs meanwhile) gets REJECTED
#                     status 28 at the destroy, 2.5-10 s after its start, exit 3
#   stray_client      while cm_events -s listens through the library, a stray
#                     client sends "GET / HTTP/1.0" to its port and another
#                     one connects and says nothing: the server's log names
#                     each ("rejected a connection from A:P: A:P is not a qpcm
#                     peer (first bytes 47 45 54 20 'GET ')", within 3 s,
#                     not at the 5 s HELLO timeout; "... sent no qpcm HELLO
#                     within 5000 ms", after 4.5-10 s), both
#                     sockets are closed by the server, no event reaches the
#                     program; then a real client connects and passes
#   no_listener       a client to a port nobody listens on: REJECTED status 8,
#                     exit 3, in under 7 s, the log says "nobody listens at"
#   validator_reject  the server maps 10.77.0.1=rxe0:1:0 (GID index 0: rxe0's
#                     link-local IPv6 GID), the client 10.77.0.2=rxe1:1 (its
#                     IPv4 GID): the validator refuses the pair at the accept,
#                     before any modify: REJECTED status 28 on both ids, both
#                     exit 3, the server's log has "validator: ...
#                     gid-family-mismatch", the client's names it too
#   unsupported       stock rstream (rsockets) through the library: non-zero
#                     exit (no crash, no hang) within 15 s, its log has
#                     "rsocket (rsockets) is not supported" (multicast, which
#                     this case used, is supported since issue 39: mckey.sh)
#   starved_client    stock cmtime -c 1000 through the library, both sides
#                     with `qp-cm --timeout 2s`, the client in a cgroup
#                     held to 20% of one vCPU (cpu.max 2000 10000): its
#                     replies arrive faster than it can take them, so REPs
#                     wait unread for longer than the answer timeout while
#                     the server, done accepting, sends no more MRAs. The
#                     peer is alive and talking: no UNREACHABLE on either
#                     side (the library used to report 'no reply' for REPs
#                     that had arrived, and cmtime's server then crashed on
#                     the passive id's UNREACHABLE); the client exits 0 with
#                     its step table, the server is still running
#   psk               the same --psk-file on both sides: connects and passes;
#                     the server with a key and the client without (and the
#                     other way round): fails, the client's log and the
#                     server's name the missing key ("the peer requires a
#                     pre-shared key, but none is configured on this side" /
#                     "this side requires a pre-shared key, but the peer has
#                     none configured"); two different keys: fails, both logs
#                     say "key confirmation failed"
#   neigh_wrong       (issue 38) a wrong permanent neighbour entry for the
#                     server's RoCE address on the client's netdev (the
#                     client's packets would go to 02:00:00:00:00:99: natively
#                     the connection is made and its traffic never arrives;
#                     rping through the library hung): the client's library
#                     reads the kernel's path facts before any modify and
#                     names neighbour-mac-mismatch with both MACs; REJECTED
#                     status 28 on both sides, both exit 3, at once
#   addr_removed      (issue 38) the server's RoCE address removed from its
#                     netdev after it listens (its library described the port
#                     with that GID): at the accept the server names the
#                     removed address before any modify (the path facts or
#                     the GID read again before RTR: gid-changed-before-rtr);
#                     REJECTED 28 on both sides, both exit 3, at once
#   tos               (issue 38) stock ib_send_bw -R --tos 96 through the
#                     library on both sides, traced by qp-trace: the test
#                     QP's RTR carries GRH traffic class 96 on both sides
#                     (rdma_set_option's TOS, set by perftest's client only,
#                     applied as rdma_cm applies it on RoCE: the passive side
#                     takes the request's); both pass
#
# Every case asserts exit statuses, the event printed with its status, the
# library's log line, a bound on the time (what each protects: "Time bounds"
# below; none is a speed claim), and at the end that no QP is left
# (check_no_qps) and no program is still running. The exact command lines,
# statuses and times are printed; on a failure, both outputs and logs.
set -uo pipefail
. "$(dirname "$0")/rdmacm_common.sh"

# native_peer first: its native server is started before the cases (the
# kernel CM is then taken away) and every case's end kills what is left.
# starved_client last: the guest is still busy tearing down its 1,000
# connections when it ends (the next case's server took 4.6 s to listen,
# not 0.7 s, and psk's pair then lost an ACK to the retry budget).
CASES_ALL=(native_peer dead_peer stopped_peer slow_accept unanswered_dreq listener_gone stray_client no_listener validator_reject unsupported psk neigh_wrong addr_removed tos starved_client)
CASE=${1:-}
shift || true
rdmacm_options "$@"
if [[ $CASE == all ]]; then
  CASES=("${CASES_ALL[@]}")
else
  # One case, or several separated by commas (one boot for them all).
  IFS=, read -ra CASES <<<"$CASE"
  for c in "${CASES[@]}"; do
    [[ " ${CASES_ALL[*]} " == *" $c "* ]] || die "CASE must be all or one or more (CASE,CASE,...) of: ${CASES_ALL[*]} (not '$c')"
  done
fi
[[ -x $CM_EVENTS ]] || die "--cm-events: '$CM_EVENTS' is not an executable"
VIA=wrapper
need_library

S_MAP="$MGMT_IP0=$QPC_DEV0:1"
C_MAP="$MGMT_IP1=$QPC_DEV1:1"

# wrap LOG MAP [QP-CM OPTIONS...]: PRE, the wrapper's words before a program
wrap() {
  local log=$1 map=$2
  shift 2
  PRE=("$QP_CM" --devices "$map" --log "$log" "$@" --)
}

# Microseconds since T0 (integer), for bounds.
usec_since() { echo $((${EPOCHREALTIME/./} - $1)); }
secs() { # microseconds -> seconds, 2 decimals
  local u=$1 sign=
  ((u < 0)) && sign=- u=$((-u))
  printf '%s%d.%02d' "$sign" $((u / 1000000)) $((u % 1000000 / 10000))
}

# start_server TAG LIMIT WORDS...: runs WORDS (with the wrapper's PRE words
# already in them) under `timeout LIMIT` in the background, output in
# $WORK/TAG.server; SPID is the `timeout` process, SERVER_T0 its start.
start_server() {
  local tag=$1 limit=$2
  shift 2
  note "$tag: server: $*"
  SERVER_T0=$(now)
  timeout -k 3 "$limit" "$@" >"$WORK/$tag.server" 2>&1 &
  SPID=$!
  PIDS+=("$SPID")
}

# The program under `timeout` PID (its only child; the wrapper execs).
child_of() {
  local c=
  read -r c _ <"/proc/$1/task/$1/children" 2>/dev/null
  echo "$c"
}

# wait_line FILE TEXT SECS [PID]: until a line of FILE contains TEXT (0), PID
# exited (1) or SECS passed (2). WAITED: the microseconds it took.
wait_line() {
  local f=$1 text=$2 t0 pid=${4:-}
  t0=$(now)
  local deadline=$((t0 + $3 * 1000000))
  while :; do
    if [[ -r $f ]] && grep -qF -- "$text" "$f"; then
      WAITED=$(usec_since "$t0")
      return 0
    fi
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      WAITED=$(usec_since "$t0")
      grep -qF -- "$text" "$f" 2>/dev/null && return 0
      return 1
    fi
    if ((${EPOCHREALTIME/./} > deadline)); then
      WAITED=$(usec_since "$t0")
      return 2
    fi
    sleep 0.05
  done
}

# stamp_line FILE TEXT OUT SECS: in the background, writes the time (now) at
# which a line of FILE is first seen to contain TEXT to OUT; nothing if not
# within SECS. A reference taken in this run for a bound: polled every 50 ms,
# so the stamp may come late, never early.
stamp_line() {
  (wait_line "$1" "$2" "$4" && now >"$3") &
  PIDS+=("$!")
}

# run_client TAG LIMIT WORDS...: in the foreground; C_RC, C_US (microseconds),
# C_END (its end, as now prints it).
run_client() {
  local tag=$1 limit=$2 t0
  shift 2
  note "$tag: client: $*"
  t0=$(now)
  timeout -k 3 "$limit" "$@" >"$WORK/$tag.client" 2>&1
  C_RC=$?
  C_END=$(now)
  C_US=$((C_END - t0))
  echo "   client exit $C_RC after $(secs "$C_US") s"
}

# wait_server TAG: the server's status in S_RC (bounded by its timeout).
wait_server() {
  S_RC=0
  wait "$SPID" || S_RC=$?
  echo "   server exit $S_RC ($(secs "$(usec_since "$SERVER_T0")") s after its start)"
}

# expect WHAT COND...: COND is a test command; prints ok or FAIL (and sets fail)
case_fail=0
expect() {
  local what=$1
  shift
  if "$@"; then
    echo "   ok: $what"
  else
    echo "   FAIL: $what"
    case_fail=1
  fi
}
has() { [[ -r $1 ]] && grep -qF -- "$2" "$1"; }
log_state() { # what a library log holds, for a failure message
  if [[ ! -e $1 ]]; then echo "never written: the library logged nothing"; else echo "$(wc -l <"$1") line(s)"; fi
}
hasnt() { ! has "$@"; }
has_re() { [[ -r $1 ]] && grep -qE -- "$2" "$1"; }
# the status an event NAME was printed with in FILE (empty: none)
event_status() {
  sed -nE "s/^[a-z]+: event RDMA_CM_EVENT_$2 status (-?[0-9]+) .*/\1/p" "$1" 2>/dev/null | head -n 1
}
between() { (($1 >= $2 && $1 <= $3)); } # N LOW HIGH (microseconds)

# Time bounds. The guest is emulated (TCG) on a host that may be loaded
# (CI: 2 CPUs), where a client's whole run takes seconds, so no bound here is
# a speed claim (those are benchmarks: tools/bench). Each keeps the case
# apart from what a broken library would do, with seconds of room:
# - ANSWER_US: "refused or reported at once", well below the library's
#   default 10 s answer timeout (QPCM_TIMEOUT_MS), which a client that missed
#   the refusal (a closed link, connection refused, REJ, the validator's
#   refusal, a failed key check) would wait out.
ANSWER_US=7000000
# - PROGRAM_US: "no hang" for runs that must end on their own, below
#   cm_events' 15 s bound on each wait (-t 15) that a stuck run would reach.
PROGRAM_US=14000000

finish_case() {
  local tag=$1 p
  # nothing of this case may still run, no QP left
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  PIDS=()
  local qfail=$fail
  fail=0
  check_no_qps "after $tag"
  ((fail)) && case_fail=1
  fail=$qfail
  for p in "$WORK/$tag".*qpcm.log; do
    [[ -e $p ]] && { echo "   log ${p##*/}:"; sed 's/^/   | /' "$p"; }
  done
  if ((case_fail)); then
    show_run "$tag"
    for p in "$WORK/$tag".*; do
      [[ -e $p ]] || continue
      case $p in *.server | *.client | *qpcm.log) ;; *) echo "----- ${p##*/}"; tail -n 40 "$p" ;; esac
    done
    echo "CASE $tag: FAIL"
    fail=1
    CASE_STATUS=1
  else
    echo "CASE $tag: PASS"
    CASE_STATUS=0
  fi
  case_fail=0
}

server_words() { # TAG PORT [cm_events options...]: the server's full command in WORDS
  local tag=$1 port=$2
  shift 2
  wrap "$WORK/$tag.server.qpcm.log" "${SERVER_MAP:-$S_MAP}" "${SERVER_OPTS[@]}"
  WORDS=("${PRE[@]}" "$CM_EVENTS" -s -b "$MGMT_IP0" -p "$port" "$@")
}
client_words() { # TAG PORT [cm_events options...]
  local tag=$1 port=$2
  shift 2
  wrap "$WORK/$tag.client.qpcm.log" "${CLIENT_MAP:-$C_MAP}" "${CLIENT_OPTS[@]}"
  WORDS=("${PRE[@]}" "$CM_EVENTS" -c -b "$MGMT_IP1" -a "$MGMT_IP0" -p "$port" "$@")
}
SERVER_OPTS=()
CLIENT_OPTS=()

# start a cm_events server and wait (bounded) until it says it listens
listening_server() { # TAG PORT LIMIT [options...]
  local tag=$1 port=$2 limit=$3
  shift 3
  server_words "$tag" "$port" "$@"
  start_server "$tag" "$limit" "${WORDS[@]}"
  if wait_line "$WORK/$tag.server" "server: listening" 30 "$SPID"; then
    echo "   server listening after $(secs "$WAITED") s"
    return 0
  fi
  echo "   FAIL: the server is not listening (after $(secs "$WAITED") s)"
  case_fail=1
  return 1
}

# ---------------------------------------------------------------- cases

case_dead_peer() {
  local t=dead_peer port=7211 st
  listening_server $t $port 30 -K -t 15 -d "server" || return
  client_words $t $port -d "client" -t 15
  run_client $t 30 "${WORDS[@]}"
  wait_server
  expect "the server printed CONNECT_REQUEST (status 0)" [ "$(event_status "$WORK/$t.server" CONNECT_REQUEST)" = 0 ]
  expect "the server killed itself before any accept" has "$WORK/$t.server" "server: killing myself (SIGKILL) before the accept"
  expect "the server never accepted" hasnt "$WORK/$t.server" "server: accepted"
  expect "server exit 137 (SIGKILL, through timeout), got $S_RC" [ "$S_RC" = 137 ]
  st=$(event_status "$WORK/$t.client" UNREACHABLE)
  expect "the client printed UNREACHABLE with a negative status (got '${st}')" eval '[[ $st == -[0-9]* ]]'
  expect "its status is -104 (-ECONNRESET, docs/rdmacm.md), got '${st}'" [ "$st" = -104 ]
  expect "the client exits 3, got $C_RC" [ "$C_RC" = 3 ]
  # at the link's close, not after the 10 s answer timeout
  expect "the client reported in under $(secs $ANSWER_US) s (no answer timeout), took $(secs "$C_US") s" between "$C_US" 0 $ANSWER_US
  # docs/rdmacm.md: "Every later error of that connection names the mapping
  # that was used"; the failure must be explained, not only reported
  expect "the client's log names the peer $MGMT_IP0:$port ($(log_state "$WORK/$t.client.qpcm.log"))" has "$WORK/$t.client.qpcm.log" "$MGMT_IP0:$port"
}

case_stopped_peer() {
  local t=stopped_peer port st pid sub
  CLIENT_OPTS=(--timeout 2s)
  for sub in held_request listening; do
    local tag=$t.$sub
    case $sub in
      held_request)
        port=7212
        # cm_events sleeps 30 s before the accept; stopped while it sleeps
        listening_server "$tag" $port 60 -w 30 -t 15 -d "server" || continue
        client_words "$tag" $port -d "client" -t 15
        note "$tag: client: ${WORDS[*]} (in the background; the server is stopped once it printed the request)"
        local t0
        t0=$(now)
        timeout -k 3 30 "${WORDS[@]}" >"$WORK/$tag.client" 2>&1 &
        local cpid=$!
        PIDS+=("$cpid")
        if wait_line "$WORK/$tag.server" "server: waiting 30 s before the accept" 10 "$SPID"; then
          pid=$(child_of "$SPID")
          kill -STOP "$pid" && echo "   server (pid $pid) stopped $(secs "$(usec_since "$t0")") s after the client's start"
        else
          echo "   FAIL: the server did not get the request"
          case_fail=1
        fi
        C_RC=0
        wait "$cpid" || C_RC=$?
        C_US=$(usec_since "$t0")
        echo "   client exit $C_RC after $(secs "$C_US") s"
        expect "the server printed CONNECT_REQUEST (status 0)" [ "$(event_status "$WORK/$tag.server" CONNECT_REQUEST)" = 0 ]
        # (stopped within a second of the request, it sent no MRA: 2000 ms; a
        # slower stop lets one out, and the log then counts from the REQ)
        expect "the client's log: no reply ... within N ms ...: UNREACHABLE" has_re "$WORK/$tag.client.qpcm.log" "no reply from $MGMT_IP0:$port within [0-9]+ ms.*: UNREACHABLE"
        ;;
      listening)
        port=7219
        listening_server "$tag" $port 60 -t 30 -d "server" || continue
        pid=$(child_of "$SPID")
        kill -STOP "$pid" && echo "   server (pid $pid) stopped right after it listened"
        client_words "$tag" $port -d "client" -t 15
        run_client "$tag" 30 "${WORDS[@]}"
        expect "the stopped server printed no event" hasnt "$WORK/$tag.server" "event RDMA_CM_EVENT"
        expect "the client's log names the peer $MGMT_IP0:$port and the timeout" has_re "$WORK/$tag.client.qpcm.log" "$MGMT_IP0:$port.*(within 2000 ms|HELLO)"
        ;;
    esac
    st=$(event_status "$WORK/$tag.client" UNREACHABLE)
    expect "the client printed UNREACHABLE status -110 (ETIMEDOUT), got '${st}'" [ "$st" = -110 ]
    expect "the client exits 3, got $C_RC" [ "$C_RC" = 3 ]
    # not before its --timeout 2s (a stopped peer is not a dead one), and
    # at it (an MRA let out before the stop adds its wait), well before
    # cm_events' own 15 s wait ends the client
    expect "the client reported within 2-10 s (--timeout 2s), took $(secs "$C_US") s" between "$C_US" 1900000 10000000
    kill -CONT "$pid" 2>/dev/null
    kill -KILL "$pid" 2>/dev/null
    wait_server
    expect "the server was killed by the test (137), got $S_RC" [ "$S_RC" = 137 ]
  done
  CLIENT_OPTS=()
}

# pair_run TAG PORT CLIENT_TIMEOUT [SERVER OPTIONS...]: a cm_events
# server with the options (-t 20 -d server), a client through `qp-cm
# --timeout CLIENT_TIMEOUT` (a duration: 2s; -t 20 -d client), both waited for; 1 if the
# server never listened.
pair_run() {
  local tag=$1 port=$2 timeout=$3 rc=0
  shift 3
  CLIENT_OPTS=(--timeout "$timeout")
  if listening_server "$tag" "$port" 60 "$@" -t 20 -d "server"; then
    client_words "$tag" "$port" -d "client" -t 20
    run_client "$tag" 30 "${WORDS[@]}"
    wait_server
  else
    rc=1
  fi
  CLIENT_OPTS=()
  return $rc
}

case_slow_accept() {
  local t=slow_accept
  pair_run $t 7220 2s -w 5 || return
  expect "both exit 0 (server $S_RC, client $C_RC)" [ "$S_RC.$C_RC" = 0.0 ]
  expect "the client printed ESTABLISHED" has "$WORK/$t.client" "event RDMA_CM_EVENT_ESTABLISHED status 0"
  expect "no UNREACHABLE on either side" eval '! has "$WORK/$t.client" UNREACHABLE && ! has "$WORK/$t.server" UNREACHABLE'
  # at least the server's 5 s hold (the request was kept alive, not
  # answered early); at most 18 s, before cm_events' own 20 s wait (-t 20)
  expect "the client waited for the accept: 5-18 s, took $(secs "$C_US") s" between "$C_US" 5000000 18000000
}

case_unanswered_dreq() {
  local t=unanswered_dreq destroyed after
  stamp_line "$WORK/$t.server" "destroying the id without rdma_disconnect" "$WORK/$t.destroyed" 60
  pair_run $t 7222 8s -N || return
  expect "the server destroyed its id without rdma_disconnect" has "$WORK/$t.server" "destroying the id without rdma_disconnect"
  expect "the client printed DISCONNECTED status 0" [ "$(event_status "$WORK/$t.client" DISCONNECTED)" = 0 ]
  expect "both exit 0 (server $S_RC, client $C_RC)" [ "$S_RC.$C_RC" = 0.0 ]
  # Timed from the server's destroy (seen in its output), so the connect's
  # time, long on a loaded guest, does not count: the client is done soon
  # after the DREP its library sends at the destroy, not when the server
  # exits 6 s later (a library without that DREP: 6.9 s from the client's
  # start) nor at the 8 s fallback.
  read -r destroyed 2>/dev/null <"$WORK/$t.destroyed"
  after=$((C_END - ${destroyed:-0}))
  expect "the client was done under 3 s after the server's destroy, took $(secs "$after") s (client in all $(secs "$C_US") s)" \
    eval '[[ -n $destroyed ]] && ((after <= 3000000))'

  expect "the client's log has no 'no DREP from'" hasnt "$WORK/$t.client.qpcm.log" "no DREP from"
}

case_listener_gone() {
  local t=listener_gone st
  pair_run $t 7223 2s -L 3 || return
  expect "the server destroyed its listening id" has "$WORK/$t.server" "destroyed the listening id, its requests unseen"
  expect "the server printed no event" hasnt "$WORK/$t.server" "event RDMA_CM_EVENT"
  st=$(event_status "$WORK/$t.client" REJECTED)
  expect "the client printed REJECTED status 28, got '${st}'" [ "$st" = 28 ]
  expect "exits: server 0, client 3 (got $S_RC, $C_RC)" [ "$S_RC.$C_RC" = 0.3 ]
  # not before the server's destroy, 3 s after it listened (the request
  # was held, not refused at once); then promptly, long before cm_events'
  # own 20 s wait (-t 20)
  expect "at the destroy: 2.5-10 s after the client's start, took $(secs "$C_US") s" between "$C_US" 2500000 10000000
}

NATIVE_PORT=7221
native_peer_server() { # before kernel_cm_off: a native listener
  note "native_peer: native server: $CM_EVENTS -s -b $QPC_IP0 -p $NATIVE_PORT"
  timeout -k 3 90 "$CM_EVENTS" -s -b "$QPC_IP0" -p "$NATIVE_PORT" -t 80 -d "native" \
    >"$WORK/native_peer.server" 2>&1 &
  NATIVE_SPID=$!
  PIDS+=("$NATIVE_SPID")
  wait_line "$WORK/native_peer.server" "server: listening" 20 "$NATIVE_SPID" ||
    echo "   the native server is not listening: $(head -n 3 "$WORK/native_peer.server" | tr '\n' '|')"
}

case_native_peer() {
  local t=native_peer st
  expect "the native server listens (kernel CM) on $QPC_IP0 port $NATIVE_PORT" has "$WORK/$t.server" "server: listening"
  # rxe1's own address: the device follows from its netdev, no map
  run_client $t 30 "$QP_CM" --log "$WORK/$t.client.qpcm.log" -- "$CM_EVENTS" -c -b "$QPC_IP1" -a "$QPC_IP0" -p "$NATIVE_PORT" -d "client" -t 15
  st=$(event_status "$WORK/$t.client" REJECTED)
  expect "the client printed REJECTED status 8, got '${st}'" [ "$st" = 8 ]
  expect "the client exits 3, got $C_RC" [ "$C_RC" = 3 ]
  # refused at once (no TCP listener), not after the 10 s answer timeout
  expect "at once: under $(secs $ANSWER_US) s, took $(secs "$C_US") s" between "$C_US" 0 $ANSWER_US
  expect "the client's log: nobody listens at $QPC_IP0:$NATIVE_PORT" has "$WORK/$t.client.qpcm.log" "nobody listens at $QPC_IP0:$NATIVE_PORT"
  expect "the native server printed no event" hasnt "$WORK/$t.server" "event RDMA_CM_EVENT"
  kill -TERM "$NATIVE_SPID" 2>/dev/null
  wait "$NATIVE_SPID" 2>/dev/null
}

case_stray_client() {
  local t=stray_client port=7213 rc t0 line
  listening_server $t $port 60 -t 40 -d "server says hello" || return
  local log=$WORK/$t.server.qpcm.log
  # 1. an HTTP client
  note "$t: stray 1: bash /dev/tcp/$MGMT_IP0/$port, sends 'GET / HTTP/1.0\\r\\n\\r\\n'"
  t0=$(now)
  if exec 5<>"/dev/tcp/$MGMT_IP0/$port"; then
    printf 'GET / HTTP/1.0\r\n\r\n' >&5
    if wait_line "$log" "is not a qpcm peer (first bytes 47 45 54 20 'GET ')" 5; then
      echo "   logged after $(secs "$WAITED") s: $(grep -F "'GET '" "$log" | head -n 1)"
      expect "the line is 'rejected a connection from $MGMT_IP0:PORT: $MGMT_IP0:PORT is not a qpcm peer ...'" \
        has_re "$log" "rejected a connection from $MGMT_IP0:[0-9]+: $MGMT_IP0:[0-9]+ is not a qpcm peer \(first bytes 47 45 54 20 'GET '\)"
      # on its first bytes, not at the 5 s HELLO timeout a silent client gets
      expect "within 3 s (not at the 5 s HELLO timeout)" between "$WAITED" 0 3000000
    else
      expect "the server's log names the HTTP client within 5 s" false
    fi
    rc=0
    read -r -t 3 -N 65536 -u 5 line 2>/dev/null || rc=$?
    expect "the server closed the HTTP client's socket (read status $rc: 1 = EOF, >128 = still open)" [ "$rc" = 1 ]
    exec 5<&- 5>&-
  else
    expect "the stray HTTP client could connect" false
  fi
  # 2. a silent client
  note "$t: stray 2: bash /dev/tcp/$MGMT_IP0/$port, says nothing"
  if exec 6<>"/dev/tcp/$MGMT_IP0/$port"; then
    if wait_line "$log" "sent no qpcm HELLO within 5000 ms" 12; then
      echo "   logged after $(secs "$WAITED") s: $(grep -F "sent no qpcm HELLO" "$log" | head -n 1)"
      expect "the line is 'rejected a connection from $MGMT_IP0:PORT: $MGMT_IP0:PORT sent no qpcm HELLO within 5000 ms'" \
        has_re "$log" "rejected a connection from $MGMT_IP0:[0-9]+: $MGMT_IP0:[0-9]+ sent no qpcm HELLO within 5000 ms"
      # the HELLO timeout (5 s) and not before it; its log line not much
      # later (a loaded guest's timer and log write), nor never
      expect "after 4.5-10 s (the HELLO timeout is 5 s), took $(secs "$WAITED") s" between "$WAITED" 4500000 10000000
    else
      expect "the server's log names the silent client within 12 s (took $(secs "$WAITED") s)" false
    fi
    rc=0
    read -r -t 3 -N 65536 -u 6 line 2>/dev/null || rc=$?
    expect "the server closed the silent client's socket (read status $rc: 1 = EOF, >128 = still open)" [ "$rc" = 1 ]
    exec 6<&- 6>&-
  else
    expect "the silent stray client could connect" false
  fi
  expect "the strays reached no id: the server printed no event yet" hasnt "$WORK/$t.server" "event RDMA_CM_EVENT"
  expect "the server is still running" kill -0 "$SPID"
  # 3. a real client
  client_words $t $port -d "client says hello" -t 15
  run_client $t 30 "${WORDS[@]}"
  wait_server
  expect "the real client connected: ESTABLISHED on both sides" \
    eval 'has "$WORK/$t.client" "client: event RDMA_CM_EVENT_ESTABLISHED status 0" && has "$WORK/$t.server" "server: event RDMA_CM_EVENT_ESTABLISHED status 0"'
  expect "one message each way" \
    eval 'has "$WORK/$t.client" "client: recv \"server message\"" && has "$WORK/$t.server" "server: recv \"client message\""'
  expect "both exit 0 (server $S_RC, client $C_RC)" [ "$S_RC.$C_RC" = 0.0 ]
  # the strays left the listener serving: no hang
  expect "the real client passed within $(secs $PROGRAM_US) s, took $(secs "$C_US") s" between "$C_US" 0 $PROGRAM_US
}

case_no_listener() {
  local t=no_listener port=7214 st
  client_words $t $port -d "anyone there" -t 15
  run_client $t 30 "${WORDS[@]}"
  st=$(event_status "$WORK/$t.client" REJECTED)
  expect "the client printed REJECTED status 8, got '${st}'" [ "$st" = 8 ]
  expect "the client exits 3, got $C_RC" [ "$C_RC" = 3 ]
  # refused at once (connection refused), not after the 10 s answer timeout
  expect "at once: under $(secs $ANSWER_US) s, took $(secs "$C_US") s" between "$C_US" 0 $ANSWER_US
  expect "the client's log: nobody listens at $MGMT_IP0:$port (connection refused)" has "$WORK/$t.client.qpcm.log" "nobody listens at $MGMT_IP0:$port (connection refused)"
}

case_validator_reject() {
  local t=validator_reject port=7215
  SERVER_MAP="$MGMT_IP0=$QPC_DEV0:1:0"
  echo "   $QPC_DEV0 port 1 GID 0: $(cat "/sys/class/infiniband/$QPC_DEV0/ports/1/gids/0" 2>/dev/null) ($(cat "/sys/class/infiniband/$QPC_DEV0/ports/1/gid_attrs/types/0" 2>/dev/null))"
  listening_server $t $port 30 -t 15 -d "server" || { SERVER_MAP=; return; }
  SERVER_MAP=
  client_words $t $port -d "client" -t 15
  run_client $t 30 "${WORDS[@]}"
  wait_server
  refused_before_modify $t "validator: .*gid-family-mismatch"
  expect "the server's log: 'validator: ' ... gid-family-mismatch" has_re "$WORK/$t.server.qpcm.log" "validator: .*gid-family-mismatch"
  expect "the client's log names the rule gid-family-mismatch" has "$WORK/$t.client.qpcm.log" "gid-family-mismatch"
}

case_unsupported() {
  local t=unsupported
  wrap "$WORK/$t.qpcm.log" "$S_MAP"
  # rstream: a client of 10.77.0.1 over rsockets (its first rsocket call)
  run_client $t 30 "${PRE[@]}" rstream -s "$MGMT_IP0" -C 1 -S 64
  echo "   rstream said: $(head -n 5 "$WORK/$t.client" | tr '\n' '|')"
  expect "rstream fails (non-zero, not killed by a signal 129-159, not the 124 timeout), got $C_RC" eval '((C_RC != 0 && C_RC != 124 && C_RC != 137 && (C_RC < 129 || C_RC > 159)))'
  # no hang: the refusal ends rstream (run_client's limit is 30 s)
  expect "within 15 s, took $(secs "$C_US") s" between "$C_US" 0 15000000
  expect "the log: rsocket (rsockets) is not supported" has_re "$WORK/$t.qpcm.log" "rsocket \(rsockets\) is not supported"
  expect "rstream printed the error (ENOSYS: 'Function not implemented' or -38 or 'rsocket')" has_re "$WORK/$t.client" "Function not implemented|-38|rsocket"
  echo "   log: $(cat "$WORK/$t.qpcm.log" 2>/dev/null | tr '\n' '|')"
}

# The server's log names the client by its TCP address: the library's link is
# not bound to the address the client program binds (cm_events -b 10.77.0.2),
# so with both ends in one guest the kernel picks 10.77.0.1 as its source.
ADDR_RE='[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+'
# A cgroup (v2) whose tasks get QUOTA microseconds of CPU per 10 ms.
starved_cgroup() { # QUOTA: sets CGROUP (its directory)
  CGROUP=/sys/fs/cgroup/qpc_starved
  mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup || return 1
  grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control || return 1
  mkdir -p "$CGROUP" && echo "$1 10000" >"$CGROUP/cpu.max"
}

case_starved_client() {
  local t=starved_client port=7290 n=1000 steps
  if ! starved_cgroup 2000; then
    echo "   FAIL: no cgroup v2 cpu controller in the guest to starve the client with"
    case_fail=1
    return
  fi
  echo "   client's cgroup: cpu.max $(cat "$CGROUP/cpu.max")"
  wrap "$WORK/$t.server.qpcm.log" "$S_MAP" --timeout 2s
  start_server $t 300 "${PRE[@]}" cmtime -b "$MGMT_IP0" -p $port
  local i
  for i in $(seq 1 200); do ss -ltn 2>/dev/null | grep -q ":$port " && break; sleep 0.05; done
  wrap "$WORK/$t.client.qpcm.log" "$C_MAP" --timeout 2s
  run_client $t 240 bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$CGROUP" \
    "${PRE[@]}" cmtime -s "$MGMT_IP0" -b "$MGMT_IP1" -p $port -c $n
  expect "the client exits 0, got $C_RC" [ "$C_RC" = 0 ]
  steps=$(grep -cE '^(create id|bind addr|resolve addr|resolve route|create qp|connect|disconnect|destroy) *:' "$WORK/$t.client")
  expect "the client printed its 8 step lines, got $steps" [ "$steps" = 8 ]
  expect "the client printed no error event" hasnt "$WORK/$t.client" "event:"
  expect "no UNREACHABLE in the client's library log" hasnt "$WORK/$t.client.qpcm.log" "UNREACHABLE"
  expect "no UNREACHABLE in the server's library log" hasnt "$WORK/$t.server.qpcm.log" "UNREACHABLE"
  expect "the cmtime server is still running" kill -0 "$(child_of "$SPID")"
  grep -E '^(create qp|connect) ' "$WORK/$t.client" | sed 's/^/   /'
  kill -TERM "$SPID" 2>/dev/null
  wait_server
}

case_psk() {
  local t=psk sub port st ka=$WORK/a.key kb=$WORK/b.key
  (umask 077 && openssl rand -hex 32 >"$ka" && openssl rand -hex 32 >"$kb") || { expect "two keys made" false; return; }
  chmod 600 "$ka" "$kb"
  for sub in same server_only client_only different; do
    local tag=$t.$sub
    case $sub in
      same) port=7216 SERVER_OPTS=(--psk-file "$ka") CLIENT_OPTS=(--psk-file "$ka") ;;
      server_only) port=7217 SERVER_OPTS=(--psk-file "$ka") CLIENT_OPTS=() ;;
      client_only) port=7218 SERVER_OPTS=() CLIENT_OPTS=(--psk-file "$ka") ;;
      different) port=7224 SERVER_OPTS=(--psk-file "$ka") CLIENT_OPTS=(--psk-file "$kb") ;;
    esac
    listening_server "$tag" $port 40 -t 20 -d "server" || continue
    client_words "$tag" $port -d "client" -t 15
    run_client "$tag" 30 "${WORDS[@]}"
    local slog=$WORK/$tag.server.qpcm.log clog=$WORK/$tag.client.qpcm.log
    if [[ $sub == same ]]; then
      wait_server
      expect "same key: ESTABLISHED on both, both exit 0 (server $S_RC, client $C_RC)" \
        eval '[ "$S_RC.$C_RC" = 0.0 ] && has "$WORK/$tag.client" "client: event RDMA_CM_EVENT_ESTABLISHED status 0" && has "$WORK/$tag.server" "server: event RDMA_CM_EVENT_ESTABLISHED status 0"'
      # no hang
      expect "within $(secs $PROGRAM_US) s, took $(secs "$C_US") s" between "$C_US" 0 $PROGRAM_US
      continue
    fi
    # the server's library may log a moment after the client is done
    case $sub in
      server_only)
        wait_line "$slog" "this side requires a pre-shared key, but the peer has none configured" 3 >/dev/null
        expect "the client's log: dropped the link to $MGMT_IP0:$port: the peer requires a pre-shared key, but none is configured on this side" has "$clog" "dropped the link to $MGMT_IP0:$port: the peer requires a pre-shared key, but none is configured on this side"
        expect "the server's log: rejected a connection from A:P: this side requires a pre-shared key, but the peer has none configured" has_re "$slog" "rejected a connection from $ADDR_RE: this side requires a pre-shared key, but the peer has none configured"
        ;;
      client_only)
        wait_line "$slog" "the peer requires a pre-shared key, but none is configured on this side" 3 >/dev/null
        expect "the client's log: dropped the link to $MGMT_IP0:$port: this side requires a pre-shared key, but the peer has none configured" has "$clog" "dropped the link to $MGMT_IP0:$port: this side requires a pre-shared key, but the peer has none configured"
        expect "the server's log: rejected a connection from A:P: the peer requires a pre-shared key, but none is configured on this side" has_re "$slog" "rejected a connection from $ADDR_RE: the peer requires a pre-shared key, but none is configured on this side"
        ;;
      different)
        wait_line "$slog" "key confirmation failed" 3 >/dev/null
        expect "the client's log: dropped the link to $MGMT_IP0:$port: key confirmation failed (log: $(log_state "$clog"))" has "$clog" "dropped the link to $MGMT_IP0:$port: key confirmation failed"
        expect "the server's log: rejected a connection from A:P: key confirmation failed (log: $(log_state "$slog"))" has_re "$slog" "rejected a connection from $ADDR_RE: key confirmation failed"
        ;;
    esac
    st=$(event_status "$WORK/$tag.client" UNREACHABLE)
    expect "the client printed UNREACHABLE with a negative status, got '${st}'" eval '[[ $st == -* ]]'
    expect "the client exits 3, got $C_RC" [ "$C_RC" = 3 ]
    # refused at the key check, not after the 10 s answer timeout
    expect "within $(secs $ANSWER_US) s, took $(secs "$C_US") s" between "$C_US" 0 $ANSWER_US
    expect "the server's program saw no event" hasnt "$WORK/$tag.server" "event RDMA_CM_EVENT"
    kill -TERM "$SPID" 2>/dev/null
    wait_server
  done
  SERVER_OPTS=()
  CLIENT_OPTS=()
}

# refused_before_modify TAG RULE_RE: the pair of TAG was refused by the
# validator on both sides (REJECTED 28, exit 3, no ESTABLISHED) within
# ANSWER_US, and the log of the side that found it names RULE_RE.
refused_before_modify() {
  local t=$1 rule=$2 st
  st=$(event_status "$WORK/$t.client" REJECTED)
  expect "the client printed REJECTED status 28, got '${st}'" [ "$st" = 28 ]
  st=$(event_status "$WORK/$t.server" REJECTED)
  expect "the server's id got REJECTED status 28, got '${st}'" [ "$st" = 28 ]
  expect "neither printed ESTABLISHED" eval '! has "$WORK/$t.client" ESTABLISHED && ! has "$WORK/$t.server" ESTABLISHED'
  expect "both exit 3 (server $S_RC, client $C_RC)" [ "$S_RC.$C_RC" = 3.3 ]
  # Refused at the exchange (REJ), not after the answer timeout (and not
  # the old behaviour: connected, then a hang until killed).
  expect "under $(secs $ANSWER_US) s, took $(secs "$C_US") s" between "$C_US" 0 $ANSWER_US
  expect "a log names /$rule/" eval 'has_re "$WORK/$t.client.qpcm.log" "$rule" || has_re "$WORK/$t.server.qpcm.log" "$rule"'
}

case_neigh_wrong() {
  local t=neigh_wrong port=7221 mac0
  mac0=$(cat "/sys/class/net/$QPC_NETDEV0/address")
  ip neigh replace "$QPC_IP0" lladdr 02:00:00:00:00:99 dev "$QPC_NETDEV1" nud permanent ||
    { expect "the wrong neighbour entry planted" false; return; }
  listening_server $t $port 30 -t 15 -d "server" || return
  client_words $t $port -d "client" -t 15
  run_client $t 30 "${WORDS[@]}"
  wait_server
  ip neigh replace "$QPC_IP0" lladdr "$mac0" dev "$QPC_NETDEV1" nud permanent
  refused_before_modify $t "validator: error neighbour-mac-mismatch .*02:00:00:00:00:99"
  expect "the client's log names the server's MAC $mac0" has "$WORK/$t.client.qpcm.log" "$mac0"
}

case_addr_removed() {
  local t=addr_removed port=7222
  listening_server $t $port 30 -t 15 -d "server" || return
  ip addr del "$QPC_IP0/24" dev "$QPC_NETDEV0" || { expect "the server's address removed" false; return; }
  client_words $t $port -d "client" -t 15
  run_client $t 30 "${WORDS[@]}"
  wait_server
  # Back as the lab made it: the address, and the route of table 100 that
  # the kernel dropped with it (tools/lab/guest-setup-rxe).
  ip addr add "$QPC_IP0/24" dev "$QPC_NETDEV0"
  ip route replace "$QPC_IP1" dev "$QPC_NETDEV0" src "$QPC_IP0" table 100
  refused_before_modify $t "validator: error [a-z-]+ .*$QPC_IP0"
}

case_tos() {
  local t=tos port=18515 trace f
  trace=$(dirname "$QP_CM")/../qp-trace/qp-trace
  [[ -x $trace ]] || { expect "qp-trace next to qp-cm ($trace)" false; return; }
  mkdir -p "$WORK/$t.traces"
  # perftest's client resolves the server's address without a source: the
  # route's local address may be either management address (both are this
  # guest's), so both sides get the whole map, as perftest.sh's mgmt mode.
  wrap "$WORK/$t.server.qpcm.log" "$S_MAP,$C_MAP"
  start_server $t 60 "$trace" -o "$WORK/$t.traces/server.%p.json" -- "${PRE[@]}" \
    ib_send_bw -R -d "$QPC_DEV0" -n 5 -s 4096 -F --tos 96 --source_ip "$MGMT_IP0"
  sleep 2
  wrap "$WORK/$t.client.qpcm.log" "$S_MAP,$C_MAP"
  run_client $t 60 "$trace" -o "$WORK/$t.traces/client.%p.json" -- "${PRE[@]}" \
    ib_send_bw -R -d "$QPC_DEV1" -n 5 -s 4096 -F --tos 96 --source_ip "$MGMT_IP1" "$MGMT_IP0"
  wait_server
  expect "both exit 0 (server $S_RC, client $C_RC)" [ "$S_RC.$C_RC" = 0.0 ]
  # perftest connects twice (its exchange channel, then the test QP) and
  # sets the TOS on the client's test id only; as with rdma_cm, the passive
  # side's QP takes the traffic class of the request.
  for f in server client; do
    expect "the $f's trace has an RTR with traffic_class 96" \
      eval 'grep -h "\"to\":\"RTR\"" "$WORK/$t.traces/$f".*.json 2>/dev/null | grep -q "\"traffic_class\":96"'
  done
}

# ---------------------------------------------------------------- main

T0=$(now)
mgmt_net_up || die "management network"
[[ " ${CASES[*]} " == *" native_peer "* ]] && native_peer_server
kernel_cm_off || die "kernel CM"
check_no_qps "before the cases"
# Each case framed for tools/lab/lab-group, under its CTest name: in one
# boot, each case's test reports its own output and status (docs/lab.md).
for c in "${CASES[@]}"; do
  ct=$(now)
  echo "qpc-case: begin lab_rdmacm_fail_$c"
  note "case $c"
  "case_$c"
  finish_case "$c"
  echo "   case $c took $(since "$ct") s"
  echo "qpc-case: end lab_rdmacm_fail_$c $CASE_STATUS"
done
echo "total $(since "$T0") s"
if ((fail)); then
  echo "FAIL (${CASES[*]})"
  exit 1
fi
echo "PASS (${CASES[*]})"
