#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark: 1,000 RC QPs in one exchange, both qp-connect processes end to
# end (exchange, RESET->RTS on every QP, a proof of 2 x 64 bytes with RDMA
# WRITE and READ checked on each), in one lab boot. Run on the host:
#   tools/bench/rc_1000qps.sh BUILD_DIR [RUNS [QPS]]   (default 3 runs, 1000 QPs)
# It reruns itself inside the lab (tools/lab/lab-run). Prints each run's wall
# time from the server's start to both processes' end, and the median of the
# runs that succeeded; a failed run is dropped and counted.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ ${1:-} != --inside ]]; then
  build=${1:?usage: rc_1000qps.sh BUILD_DIR [RUNS [QPS]]}
  runs=${2:-3}
  qps=${3:-1000}
  [[ -x $build/tools/qp-connect/qp-connect ]] || { echo "rc_1000qps.sh: no qp-connect in $build" >&2; exit 2; }
  [[ $runs =~ ^[1-9][0-9]*$ && $qps =~ ^[1-9][0-9]*$ ]] ||
    { echo "rc_1000qps.sh: RUNS and QPS must be positive counts" >&2; exit 2; }
  echo "rc_1000qps.sh: $(uptime)"
  exec "$here/../lab/lab-run" -- "$here/rc_1000qps.sh" --inside "$(cd "$build" && pwd)" "$runs" "$qps"
fi
qc=$2/tools/qp-connect/qp-connect
runs=$3
qps=$4
: "${QPC_DEV0:?not in the lab}"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

times=() failed=0
for ((r = 1; r <= runs; r++)); do
  s=$(date +%s%N)
  "$qc" -d "$QPC_DEV0" --qps "$qps" -s 64 -r 2 -n 2 --timeout 60 >"$w/server.out" 2>&1 &
  server=$!
  sleep 0.2
  if "$qc" -d "$QPC_DEV1" --qps "$qps" -s 64 -r 2 -n 2 --timeout 60 "$QPC_IP0" >"$w/client.out" 2>&1 &&
    wait $server; then
    e=$(date +%s%N)
    ms=$(((e - s) / 1000000))
    echo "run $r: wall $ms ms; $(grep -m1 'traffic ok' "$w/client.out")"
    times+=("$ms")
  else
    wait $server 2>/dev/null || true
    echo "run $r: failed; client: $(tail -n1 "$w/client.out"); server: $(tail -n1 "$w/server.out")"
    failed=$((failed + 1))
  fi
done
m=$(printf '%s\n' "${times[@]}" | sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "none"}')
echo "median of $runs runs, $qps RC QPs end to end: $m ms ($failed failed runs dropped)"
[[ ${#times[@]} -gt 0 ]]
