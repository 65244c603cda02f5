#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lab tests of the out-of-band exchange against stray, dead and eavesdropping
# peers (issues 11 and 18), with two real qp-connect processes on QPC_DEV0
# (server) and QPC_DEV1 (client).
#
# Usage: oob_peer_lab.sh QP_CONNECT OOB_CAPTURE SCENARIO
#   killed_tcp|killed_stdio|killed_file  the client is SIGKILLed mid-traffic;
#                  the server must report "the peer went away during traffic"
#                  (exit 7) within 10 s of the kill, not at the 30 s deadline
#                  (measured: 0.4 s; the room is for a loaded emulated guest)
#   stopped        the client is SIGSTOPped mid-traffic; while the server waits
#                  for a completion (its first 1.5 s: the wait ends at the
#                  proof's stall, about 2 s) it must use
#                  well under a core (under half of one: a spinning wait uses
#                  all of it; measured: 12 %)
#   stray_psk      a keyless client, a client with another key and a port
#                  scanner come first; the keyed server rejects each (a log
#                  line naming the address), keeps listening, and connects the
#                  real client
#   stray_garbage  the same without a key: garbage, then the real client
#   role_clash     stdio, both sides --role client: both refuse, naming it
#   relay_tcp|relay_stdio  a keyed session through an eavesdropping relay (tcp:
#                  oob_capture relay; stdio: tee): the capture holds no
#                  description (the codec parses none, the QPNs both sides
#                  report are not in it); the same without a key is the
#                  control (the check finds them there)
set -uo pipefail

bin=$1 capture=$2 scenario=$3
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
. "$(dirname "$0")/lab_qps.sh"  # wait_listening
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
now() { date +%s.%N; }
elapsed_below() { awk -v a="$1" -v b="$2" -v max="$3" 'BEGIN { exit !(b - a < max) }'; }
show() { for f in "$@"; do echo "--- $f"; cat "$work/$f"; done; }
# Waits up to $2 seconds for /$1/ in $work/$3.
wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    grep -Eq "$1" "$work/$3" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
S=(-d "$QPC_DEV0")
C=(-d "$QPC_DEV1")

# start_pair OOB COMMON_ARGS...: server then client in the background, output
# in $work/server.out and $work/client.out; sets spid and cpid.
start_pair() {
  local oob=$1
  shift
  case $oob in
    tcp)
      "$bin" "${S[@]}" "$@" >"$work/server.out" 2>&1 &
      spid=$!
      sleep 0.3
      "$bin" "${C[@]}" "$@" "$QPC_IP0" >"$work/client.out" 2>&1 &
      cpid=$!
      ;;
    file)
      "$bin" "${S[@]}" --oob file --role server --oob-dir "$work" "$@" >"$work/server.out" 2>&1 &
      spid=$!
      "$bin" "${C[@]}" --oob file --role client --oob-dir "$work" "$@" >"$work/client.out" 2>&1 &
      cpid=$!
      ;;
    stdio)
      mkfifo "$work/s2c" "$work/c2s"
      "$bin" "${S[@]}" --oob stdio --role server "$@" <"$work/c2s" >"$work/s2c" \
        2>"$work/server.out" &
      spid=$!
      "$bin" "${C[@]}" --oob stdio --role client "$@" >"$work/c2s" <"$work/s2c" \
        2>"$work/client.out" &
      cpid=$!
      ;;
  esac
  pids+=("$spid" "$cpid")
}

case $scenario in
  killed_tcp | killed_stdio | killed_file)
    oob=${scenario#killed_}
    start_pair "$oob" -v -n 100000000 --timeout 30
    check "both sides reached the barrier" wait_for "waiting for the peer \(barrier\)" 60 client.out
    sleep 2  # well into the traffic
    t_kill=$(now)
    kill -9 "$cpid"
    wait "$spid"
    got=$?
    t_end=$(now)
    show server.out
    echo "server exited $got, $(awk -v a="$t_kill" -v b="$t_end" 'BEGIN { printf "%.2f", b - a }') s after the kill"
    check "server exit 7 (traffic)" test "$got" = 7
    check "server names the peer gone during traffic" \
      grep -q "the peer went away during traffic (ping-pong)" "$work/server.out"
    check "noticed within 10 s of the kill, not at the 30 s deadline" elapsed_below "$t_kill" "$t_end" 10
    ;;

  stopped)
    start_pair tcp -v -n 100000000 --timeout 8
    check "both sides reached the barrier" wait_for "waiting for the peer \(barrier\)" 60 client.out
    sleep 2
    kill -STOP "$cpid"
    # The server's CPU time (utime + stime of /proc/PID/stat, read with
    # builtins) while it waits for a completion from the stopped peer,
    # sampled every 0.1 s for 1.5 s: since issue 31 that wait ends at the
    # proof's stall (the retry budget plus 1.5 s: 2037 ms after the last
    # completion), then the server trades notes and exits 7. (A fixed 3 s
    # window from 0.5 s on outlived the server and compared nothing.)
    tck=$(getconf CLK_TCK)
    t0='' c0='' t1='' c1=''
    stopped_at=${EPOCHREALTIME/./}
    while ((${EPOCHREALTIME/./} - stopped_at < 1500000)); do
      read -ra st 2>/dev/null <"/proc/$spid/stat" || break
      [[ ${st[2]} == Z ]] && break
      if [[ -z $t0 ]]; then t0=${EPOCHREALTIME/./} c0=$((st[13] + st[14])); else
        t1=${EPOCHREALTIME/./} c1=$((st[13] + st[14])); fi
      sleep 0.1
    done
    window=$(((${t1:-0} - ${t0:-0}) / 1000)) # ms
    used=$(((${c1:-0} - ${c0:-0}) * 1000 / tck)) # ms of CPU
    echo "server CPU while waiting for a stopped peer: $used ms in $window ms"
    check "the wait was sampled over at least 0.5 s (${window} ms)" test "$window" -ge 500
    # A spinning wait uses a whole vCPU (as much CPU as time); the back-off
    # showed 12 %. Under half keeps them apart on a loaded emulated guest,
    # where every wake-up costs more of the guest's time.
    check "the wait uses under half a core (it spun a whole one before)" \
      test $((used * 2)) -lt "$window"
    kill -9 "$cpid"
    wait "$spid"
    got=$?
    show server.out
    check "server exit 7 (traffic)" test "$got" = 7
    ;;

  stray_psk | stray_garbage)
    keyed=()
    if [[ $scenario == stray_psk ]]; then
      "$bin" --gen-psk "$work/key" >"$work/gen.out" 2>&1
      check "--gen-psk writes a key" test -s "$work/key"
      check "--gen-psk refuses to overwrite" \
        bash -c "! '$bin' --gen-psk '$work/key' 2>'$work/gen2.out' && grep -q 'refusing to overwrite' '$work/gen2.out'"
      check "the key file is mode 0600" test "$(stat -c %a "$work/key")" = 600
      "$bin" --gen-psk "$work/other" >/dev/null
      keyed=(--psk-file "$work/key")
    fi
    "$bin" "${S[@]}" "${keyed[@]}" -n 50 --timeout 60 >"$work/server.out" 2>&1 &
    spid=$!
    pids+=("$spid")
    sleep 0.5
    strays=0
    if [[ $scenario == stray_psk ]]; then
      "$bin" "${C[@]}" -n 50 --timeout 10 "$QPC_IP0" >"$work/keyless.out" 2>&1
      check "the keyless client fails its exchange (exit 4)" test $? = 4
      "$bin" "${C[@]}" --psk-file "$work/other" -n 50 --timeout 10 "$QPC_IP0" \
        >"$work/wrongkey.out" 2>&1
      check "the client with another key fails its exchange (exit 4)" test $? = 4
      check "the client with another key reports key confirmation failed" \
        grep -q "key confirmation failed" "$work/wrongkey.out"
      strays=2
    fi
    # A port scanner: garbage, then it hangs up. The server may reject it
    # after the first bytes and reset the connection while printf still
    # writes (bash's printf writes in pieces): the write is made in a
    # subshell, so the SIGPIPE that follows ends the subshell, not this
    # script (seen in CI under load: the script died silently).
    # The server may not listen yet (under load it takes longer than the
    # 0.5 s above to open the device).
    wait_listening 18515
    scanned=0
    { exec 3<>"/dev/tcp/$QPC_IP0/18515"; } 2>/dev/null && scanned=1
    check "the scanner reaches the server" test "$scanned" = 1
    (printf 'GET / HTTP/1.0\r\n\r\n' >&3) 2>/dev/null
    sleep 0.5
    exec 3>&-
    strays=$((strays + 1))
    "$bin" "${C[@]}" "${keyed[@]}" -n 50 --timeout 30 "$QPC_IP0" >"$work/client.out" 2>&1
    got_c=$?
    wait "$spid"
    got_s=$?
    show server.out client.out
    check "the real client connects (exit 0)" test "$got_c" = 0
    check "the server serves it (exit 0)" test "$got_s" = 0
    check "traffic ok on both sides" \
      bash -c "grep -q 'traffic ok' '$work/server.out' && grep -q 'traffic ok' '$work/client.out'"
    check "one line per stray client naming its address" \
      test "$(grep -c 'warning: rejected tcp .*still waiting for the peer' "$work/server.out")" = "$strays"
    check "the scanner is named as HTTP" grep -q "rejected tcp.*looks like HTTP" "$work/server.out"
    ;;

  role_clash)
    mkfifo "$work/s2c" "$work/c2s"
    "$bin" "${S[@]}" --oob stdio --role client --timeout 20 <"$work/c2s" >"$work/s2c" \
      2>"$work/a.out" &
    apid=$!
    "$bin" "${C[@]}" --oob stdio --role client --timeout 20 >"$work/c2s" <"$work/s2c" \
      2>"$work/b.out" &
    bpid=$!
    pids+=("$apid" "$bpid")
    wait "$apid"
    got_a=$?
    wait "$bpid"
    got_b=$?
    show a.out b.out
    check "both exit 4 (exchange), not 7 (content mismatch)" \
      bash -c "test $got_a = 4 && test $got_b = 4"
    check "both name the role clash" \
      bash -c "grep -q \"both sides declare the role 'client'\" '$work/a.out' && grep -q \"both sides declare the role 'client'\" '$work/b.out'"
    ;;

  relay_tcp | relay_stdio)
    "$bin" --gen-psk "$work/key" >/dev/null
    qpns() {  # the local and remote QPNs a --json report names
      grep -o '"qpn": [0-9]*' "$1" | awk '{ print $2 }' | sort -u | tr '\n' ' '
    }
    for keyed in yes no; do
      echo "=== keyed: $keyed"
      key=()
      [[ $keyed == yes ]] && key=(--psk-file "$work/key")
      rm -f "$work"/cap.* "$work"/s2c "$work"/c2s
      if [[ $scenario == relay_tcp ]]; then
        "$bin" "${S[@]}" "${key[@]}" --json -n 20 --timeout 30 >"$work/server.json" \
          2>"$work/server.err" &
        spid=$!
        "$capture" relay 18600 "$QPC_IP0" 18515 "$work/cap" >"$work/relay.out" 2>&1 &
        rpid=$!
        pids+=("$spid" "$rpid")
        sleep 0.5
        "$bin" "${C[@]}" "${key[@]}" --json -n 20 --timeout 30 --port 18600 "$QPC_IP0" \
          >"$work/client.json" 2>"$work/client.err"
        got_c=$?
        wait "$spid"
        got_s=$?
        wait "$rpid"
        files=("$work/cap.c2s" "$work/cap.s2c")
        lines=()
      else
        mkfifo "$work/s2c" "$work/c2s"
        # The server's JSON report goes to stderr with stdio: stdout is the
        # channel. Each direction passes through tee, the eavesdropper.
        (
          "$bin" "${S[@]}" "${key[@]}" --oob stdio --role server --json -n 20 --timeout 30 \
            <"$work/c2s" 2>"$work/server.json" | tee "$work/cap.s2c" >"$work/s2c"
          exit "${PIPESTATUS[0]}"
        ) &
        spid=$!
        (
          "$bin" "${C[@]}" "${key[@]}" --oob stdio --role client --json -n 20 --timeout 30 \
            <"$work/s2c" 2>"$work/client.json" | tee "$work/cap.c2s" >"$work/c2s"
          exit "${PIPESTATUS[0]}"
        ) &
        cpid=$!
        pids+=("$spid" "$cpid")
        wait "$spid"
        got_s=$?
        wait "$cpid"
        got_c=$?
        files=("$work/cap.c2s" "$work/cap.s2c")
        lines=(--lines)
      fi
      check "keyed=$keyed: both sides connect (exit 0)" bash -c "test $got_s = 0 && test $got_c = 0"
      [[ $got_s == 0 && $got_c == 0 ]] || show server.json client.json
      q=$(qpns "$work/server.json")
      echo "QPNs both sides report: $q"
      "$capture" check "${lines[@]}" $q -- "${files[@]}" >"$work/check.out" 2>&1
      got=$?
      cat "$work/check.out"
      if [[ $keyed == yes ]]; then
        check "keyed: the capture discloses no description and no QPN" test "$got" = 0
        check "keyed: the descriptions on the wire are sealed" \
          grep -q "endpoint flags 0x.*the codec cannot parse it" "$work/check.out"
      else
        check "control (no key): the same check finds the descriptions" test "$got" = 1
      fi
    done
    ;;

  *)
    echo "oob_peer_lab: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
exit $fail
