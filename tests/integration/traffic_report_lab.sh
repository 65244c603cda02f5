#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qp-connect's perftest-grade traffic report (issue 14), one scenario per run:
#   duration  UC, both sides -D 2 --json: both exit 0, agree on the iterations
#             run, the client ran at least 2 s, latency percentiles reported;
#             then -D 1 on the client only: the server (default -n 1000)
#             follows it, both sides run the same iterations
#   sweep     UD, both sides -a -s 64 (text): a table line for every size
#             2..64 on both sides, the text names every size in order
#   qps       RC, --qps 3 --json --report-gbits, client -n 30, server -n 7:
#             the server follows the client (30 iterations on both sides),
#             per-QP entries with their QPN and latency, bandwidth in Gb/s
#   events    RC, both sides -e --qps 2 --json -n 50: the waits sleep on
#             completion events (two CQs on one channel) and the traffic,
#             RDMA checks included, passes on both sides
# Speed is not asserted: only what the report must contain.
#
# Usage: traffic_report_lab.sh QP_CONNECT SCENARIO
set -uo pipefail
bin=$1 scenario=$2
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run COMMON -- SERVER -- CLIENT: both sides over tcp; their outputs in
# $work/server.out and $work/client.out, their statuses in got_s and got_c.
run() {
  local common=() server=() client=()
  while [[ $# -gt 0 && $1 != -- ]]; do common+=("$1"); shift; done
  shift
  while [[ $# -gt 0 && $1 != -- ]]; do server+=("$1"); shift; done
  shift
  client=("$@")
  "$bin" -d "$QPC_DEV0" "${common[@]}" "${server[@]}" >"$work/server.out" 2>&1 &
  local spid=$!
  sleep 0.2
  "$bin" -d "$QPC_DEV1" "${common[@]}" "${client[@]}" "$QPC_IP0" >"$work/client.out" 2>&1
  got_c=$?
  wait "$spid"; got_s=$?
  echo "--- server: exit $got_s"; cat "$work/server.out"
  echo "--- client: exit $got_c"; cat "$work/client.out"
}

fail=0
both_ok() {
  [[ $got_s == 0 ]] || { echo "FAIL: server exit $got_s"; fail=1; }
  [[ $got_c == 0 ]] || { echo "FAIL: client exit $got_c"; fail=1; }
}
# check PYTHON_EXPR...: asserts over s and c, the two JSON reports' "traffic".
check() {
  python3 - "$work/server.out" "$work/client.out" "$@" <<'PY' || fail=1
import json, sys
s = json.load(open(sys.argv[1]))["traffic"]
c = json.load(open(sys.argv[2]))["traffic"]
for expr in sys.argv[3:]:
    if not eval(expr):
        print("FAIL:", expr)
        sys.exit(1)
    print("ok:", expr)
PY
}

case $scenario in
  duration)
    run -t uc -D 2 --json --timeout 20 -- --
    both_ok
    check 's["mode"] == "duration" and c["mode"] == "duration"' \
      's["iters"] == c["iters"] > 0' \
      's["results"][0]["iters"] == c["results"][0]["iters"] == c["iters"]' \
      'c["results"][0]["seconds"] >= 2.0' \
      'all(x["results"][0]["latency_us"][k] is not None for x in (s, c) for k in ("min", "p50", "p99", "max"))' \
      'c["results"][0]["latency_us"]["min"] <= c["results"][0]["latency_us"]["p50"] <= c["results"][0]["latency_us"]["p99"] <= c["results"][0]["latency_us"]["max"]' \
      'c["bw_unit"] == "MB/s" and c["results"][0]["bw_avg"] > 0 and c["results"][0]["msg_rate_mpps"] > 0'
    run -t uc --json --timeout 20 -- -- -D 1
    both_ok
    check 's["mode"] == "iters" and c["mode"] == "duration"' \
      's["iters"] == c["iters"] > 0' \
      'c["results"][0]["seconds"] >= 1.0'
    ;;
  sweep)
    run -t ud -a -s 64 -n 20 --timeout 20 -- --
    both_ok
    for side in server client; do
      for size in 2 4 8 16 32 64; do
        grep -Eq "^ $size +20 +[0-9]" "$work/$side.out" ||
          { echo "FAIL: $side: no table line for $size bytes"; fail=1; }
      done
      grep -q "traffic ok: sizes 2..64 bytes (6 sizes, 120 iterations in all)" "$work/$side.out" ||
        { echo "FAIL: $side: no 'traffic ok' line for the sweep"; fail=1; }
    done
    ;;
  qps)
    run --qps 3 --json --report-gbits --timeout 20 -- -n 7 -- -n 30
    both_ok
    check 's["iters"] == c["iters"] == 30' \
      's["bw_unit"] == c["bw_unit"] == "Gb/s"' \
      'len(c["results"]) == 1 and len(c["results"][0]["qps"]) == 3' \
      '[q["index"] for q in c["results"][0]["qps"]] == [0, 1, 2]' \
      'all(isinstance(q["qpn"], int) and q["latency_us"]["samples"] == 30 and q["bw_peak"] > 0 for q in c["results"][0]["qps"])' \
      'c["results"][0]["latency_us"]["samples"] == 90' \
      'c["rdma_write_checked"] and c["rdma_read_checked"]'
    ;;
  events)
    run -e --qps 2 --json -n 50 --timeout 20 -- --
    both_ok
    check 's["completion"] == c["completion"] == "events"' \
      's["iters"] == c["iters"] == 50' \
      'c["rdma_write_checked"] and c["rdma_read_checked"]' \
      'all(len(x["results"][0]["qps"]) == 2 for x in (s, c))'
    ;;
  *)
    echo "traffic_report_lab: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
exit $fail
