#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark: qp-connect's proof of a connection (RC, N round trips of SIZE
# bytes) against the stock ibv_rc_pingpong on the same two rxe devices, in
# one lab boot. Run on the host:
#   tools/bench/traffic.sh BUILD_DIR [RUNS]        (default 5 runs of each)
# It reruns itself inside the lab (tools/lab/lab-run). Prints each run's
# microseconds per round trip, then the median of the runs that succeeded
# for each tool; a failed run is dropped and counted. Figures under TCG are
# for the ratio only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ ${1:-} != --inside ]]; then
  build=${1:?usage: traffic.sh BUILD_DIR [RUNS]}
  runs=${2:-5}
  [[ -x $build/tools/qp-connect/qp-connect ]] || { echo "traffic.sh: no qp-connect in $build" >&2; exit 2; }
  [[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "traffic.sh: RUNS must be a positive count" >&2; exit 2; }
  echo "traffic.sh: $(uptime)"
  exec "$here/../lab/lab-run" -- "$here/traffic.sh" --inside "$(cd "$build" && pwd)" "$runs"
fi
qc=$2/tools/qp-connect/qp-connect
runs=$3
iters=1000 size=4096
: "${QPC_DEV0:?not in the lab}"

median() { sort -n | awk '{v[NR]=$1} END {if (NR) printf "%s", v[int((NR+1)/2)]; else printf "none"}'; }

# one_run PATTERN SED_EXPR SERVER... -- CLIENT...: one pair, the server
# started first; prints the client's us per round trip (its line matching
# PATTERN, through SED_EXPR); fails when either side fails.
one_run() {
  local pattern=$1 expr=$2 server line k
  shift 2
  local args=("$@")
  for k in "${!args[@]}"; do [[ ${args[$k]} == -- ]] && break; done
  "${args[@]:0:k}" >/dev/null 2>&1 &
  server=$!
  sleep 0.3
  if line=$("${args[@]:k+1}" 2>&1 | grep "$pattern") && wait $server; then
    sed -n "$expr" <<<"$line"
  else
    wait $server 2>/dev/null
    return 1
  fi
}

qc_times=() pp_times=() qc_failed=0 pp_failed=0
for ((r = 1; r <= runs; r++)); do
  if us=$(one_run 'traffic ok' 's#.* \([0-9.]*\) us/round trip.*#\1#p' \
    "$qc" -d "$QPC_DEV0" -n $iters -s $size -- "$qc" -d "$QPC_DEV1" -n $iters -s $size "$QPC_IP0"); then
    echo "run $r: qp-connect $us us/round trip"
    qc_times+=("$us")
  else
    echo "run $r: qp-connect failed"
    qc_failed=$((qc_failed + 1))
  fi
  if us=$(one_run 'usec/iter' 's#.* = \([0-9.]*\) usec/iter.*#\1#p' \
    ibv_rc_pingpong -d "$QPC_DEV0" -g "$QPC_GID0" -n $iters -s $size -- \
    ibv_rc_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" -n $iters -s $size "$QPC_IP0"); then
    echo "run $r: ibv_rc_pingpong $us us/round trip"
    pp_times+=("$us")
  else
    echo "run $r: ibv_rc_pingpong failed"
    pp_failed=$((pp_failed + 1))
  fi
done
qc_m=$(printf '%s\n' "${qc_times[@]}" | median)
pp_m=$(printf '%s\n' "${pp_times[@]}" | median)
echo "median of $runs runs, RC $iters x $size bytes: qp-connect $qc_m us/round trip" \
  "($qc_failed failed runs dropped), ibv_rc_pingpong $pp_m us ($pp_failed failed runs dropped)"
if [[ $qc_m != none && $pp_m != none ]]; then
  awk -v a="$qc_m" -v b="$pp_m" 'BEGIN {printf "ratio qp-connect / ibv_rc_pingpong: %.2f\n", a / b}'
fi
[[ ${#qc_times[@]} -gt 0 && ${#pp_times[@]} -gt 0 ]]
