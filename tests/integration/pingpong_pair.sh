#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs rdma-core's stock ibv_{rc,uc,ud}_pingpong against `qp-connect --wire
# pingpong` in the lab and checks both exit statuses (and, optionally, output).
# Our side runs on QPC_DEV0 when it is the server, on QPC_DEV1 when it is the
# client; the stock program takes the other device, always with -g and -c.
#
# Usage: pingpong_pair.sh QP_CONNECT TRANSPORT server|client EXPECT_OURS EXPECT_STOCK
#          [--grep RE] [--grep-stock RE] -- COMMON_ARGS... [-- OUR_ARGS... [-- STOCK_ARGS...]]
# COMMON_ARGS go to both programs (e.g. -n 200). EXPECT_* is an exit status or
# "any"; with "any" the stock program is killed once ours has finished (the
# stock programs have no timeout of their own). Exits 0 when all checks pass.
set -uo pipefail

bin=$1 transport=$2 role=$3 want_o=$4 want_s=$5
shift 5
grep_o="" grep_s=""
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    --grep) grep_o=$2; shift 2 ;;
    --grep-stock) grep_s=$2; shift 2 ;;
    *) echo "pingpong_pair: unknown option $1" >&2; exit 2 ;;
  esac
done
shift  # --
common=() ours=() stock=()
while [[ $# -gt 0 && $1 != -- ]]; do common+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
while [[ $# -gt 0 && $1 != -- ]]; do ours+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
stock=("$@")

: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
stock_bin=ibv_${transport}_pingpong
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/lab/skip_or_fail.sh"
command -v "$stock_bin" >/dev/null || skip_or_fail "pingpong_pair: $stock_bin not installed (ibverbs-utils)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=18515
stock_limit=120  # seconds: a hung stock program must not hang the test

# Waits until something listens on TCP $port (from /proc, no tools needed).
wait_listen() {
  local hex i
  hex=$(printf '%04X' "$port")
  for ((i = 0; i < 200; i++)); do
    if grep -qs ":$hex [0-9A-F:]* 0A " /proc/net/tcp /proc/net/tcp6; then return 0; fi
    sleep 0.05
  done
  return 1
}

if [[ $role == server ]]; then
  o_args=(--wire pingpong -t "$transport" -d "$QPC_DEV0" -p "$port" "${common[@]}" "${ours[@]}")
  s_args=(-d "$QPC_DEV1" -g "$QPC_GID1" -p "$port" -c "${common[@]}" "${stock[@]}" "$QPC_IP0")
  "$bin" "${o_args[@]}" >"$work/ours.out" 2>&1 &
  opid=$!
  wait_listen || echo "pingpong_pair: qp-connect is not listening on $port"
  timeout "$stock_limit" "$stock_bin" "${s_args[@]}" >"$work/stock.out" 2>&1 &
  spid=$!
else
  s_args=(-d "$QPC_DEV0" -g "$QPC_GID0" -p "$port" -c "${common[@]}" "${stock[@]}")
  o_args=(--wire pingpong -t "$transport" -d "$QPC_DEV1" -p "$port" "${common[@]}" "${ours[@]}"
          "$QPC_IP0")
  timeout "$stock_limit" "$stock_bin" "${s_args[@]}" >"$work/stock.out" 2>&1 &
  spid=$!
  wait_listen || echo "pingpong_pair: $stock_bin is not listening on $port"
  "$bin" "${o_args[@]}" >"$work/ours.out" 2>&1 &
  opid=$!
fi
wait "$opid"; got_o=$?
if [[ $want_s == any ]]; then
  sleep 1
  kill "$spid" 2>/dev/null
fi
wait "$spid"; got_s=$?

echo "--- qp-connect ($role: ${o_args[*]}): exit $got_o"
cat "$work/ours.out"
echo "--- $stock_bin (${s_args[*]}): exit $got_s"
cat "$work/stock.out"
ok=0
if [[ $want_o != any && $got_o != "$want_o" ]]; then echo "FAIL: qp-connect exit $got_o, want $want_o"; ok=1; fi
if [[ $want_s != any && $got_s != "$want_s" ]]; then echo "FAIL: $stock_bin exit $got_s, want $want_s"; ok=1; fi
# With -c the stock client reports bad content on stdout but still exits 0.
if grep -q "invalid data" "$work/stock.out"; then echo "FAIL: $stock_bin found invalid data"; ok=1; fi
if [[ -n $grep_o ]] && ! grep -Eq "$grep_o" "$work/ours.out"; then echo "FAIL: qp-connect output lacks /$grep_o/"; ok=1; fi
if [[ -n $grep_s ]] && ! grep -Eq "$grep_s" "$work/stock.out"; then echo "FAIL: $stock_bin output lacks /$grep_s/"; ok=1; fi
exit $ok
