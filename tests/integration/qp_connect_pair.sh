#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs two qp-connect processes in the lab, server on QPC_DEV0 and client on
# QPC_DEV1, and checks both exit statuses (and, optionally, their output).
#
# Usage: qp_connect_pair.sh QP_CONNECT OOB EXPECT_SERVER EXPECT_CLIENT [--grep-server RE]
#          [--grep-client RE] [--kill-client-after SECS] [--host-suffix :PORT] -- COMMON_ARGS... [-- SERVER_ARGS... [-- CLIENT_ARGS...]]
# OOB is tcp, file or stdio. Exits 0 when both statuses (and greps) match.
set -uo pipefail

bin=$1 oob=$2 want_s=$3 want_c=$4
shift 4
grep_s="" grep_c="" kill_after="" host_suffix=""
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    --grep-server) grep_s=$2; shift 2 ;;
    --grep-client) grep_c=$2; shift 2 ;;
    --kill-client-after) kill_after=$2; shift 2 ;;
    --host-suffix) host_suffix=$2; shift 2 ;;  # tcp: the client's HOST is QPC_IP0 + this (":PORT")
    *) echo "qp_connect_pair: unknown option $1" >&2; exit 2 ;;
  esac
done
shift  # --
common=() server=() client=()
while [[ $# -gt 0 && $1 != -- ]]; do common+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
while [[ $# -gt 0 && $1 != -- ]]; do server+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
client=("$@")

: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
s_args=(-d "$QPC_DEV0" --oob "$oob" "${common[@]}" "${server[@]}")
c_args=(-d "$QPC_DEV1" --oob "$oob" "${common[@]}" "${client[@]}")
case $oob in
  tcp) c_args+=("$QPC_IP0$host_suffix") ;;
  file) s_args+=(--role server --oob-dir "$work"); c_args+=(--role client --oob-dir "$work") ;;
  stdio) s_args+=(--role server); c_args+=(--role client); mkfifo "$work/s2c" "$work/c2s" ;;
esac

if [[ $oob == stdio ]]; then
  "$bin" "${s_args[@]}" <"$work/c2s" >"$work/s2c" 2>"$work/server.out" &
  spid=$!
  # Open order matters with FIFOs: each open blocks until its other end opens.
  "$bin" "${c_args[@]}" >"$work/c2s" <"$work/s2c" 2>"$work/client.out" &
  cpid=$!
else
  "$bin" "${s_args[@]}" >"$work/server.out" 2>&1 &
  spid=$!
  sleep 0.2
  "$bin" "${c_args[@]}" >"$work/client.out" 2>&1 &
  cpid=$!
fi
if [[ -n $kill_after ]]; then
  sleep "$kill_after"
  kill -9 "$cpid" 2>/dev/null
fi
wait "$cpid"; got_c=$?
wait "$spid"; got_s=$?

echo "--- server (${s_args[*]}): exit $got_s"
cat "$work/server.out"
echo "--- client (${c_args[*]}): exit $got_c"
cat "$work/client.out"
ok=0
if [[ $want_s != any && $got_s != "$want_s" ]]; then echo "FAIL: server exit $got_s, want $want_s"; ok=1; fi
if [[ $want_c != any && $got_c != "$want_c" ]]; then echo "FAIL: client exit $got_c, want $want_c"; ok=1; fi
if [[ -n $grep_s ]] && ! grep -Eq "$grep_s" "$work/server.out"; then echo "FAIL: server output lacks /$grep_s/"; ok=1; fi
if [[ -n $grep_c ]] && ! grep -Eq "$grep_c" "$work/client.out"; then echo "FAIL: client output lacks /$grep_c/"; ok=1; fi
exit $ok
