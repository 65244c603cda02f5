#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark (issue 17): QPs listed, paired and judged by qp-inspect and
# qp-validate's snapshot mode.
#
#   tools/bench/inspect.sh BUILD_DIR [QPS [RUNS]]
#       Any machine, no RDMA device: inspect_bench's in-process phases at QPS
#       QPs (default 10000: 5000 RC pairs, two samples), then the tools on its
#       snapshot: qp-validate (text and --json), median wall time of RUNS.
#   tools/lab/lab-run --mem 1024 -- tools/bench/inspect.sh BUILD_DIR --lab [N [RUNS]]
#       In the lab: ib_write_bw -q N on each device (2N QPs, default N = 200)
#       listed by the real kernel: qp-inspect, qp-inspect -o and `rdma res show
#       qp`, median wall time of RUNS; then qp-validate on the snapshot.
# Figures go to docs/benchmarks.md; under TCG use them for ratios only.
set -euo pipefail
build=${1:?usage: inspect.sh BUILD_DIR [QPS [RUNS]] | BUILD_DIR --lab [N [RUNS]]}
shift
qi=$build/tools/qp-inspect/qp-inspect
qv=$build/tools/qp-validate/qp-validate
source "$(dirname "${BASH_SOURCE[0]}")/write_bw_pairs.sh"

median_ms() {  # runs command...
  local runs=$1 times=() i s e
  shift
  for ((i = 0; i < runs; i++)); do
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    e=$(date +%s%N)
    times+=($(((e - s) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p"
}

if [[ ${1:-} != --lab ]]; then
  qps=${1:-10000}
  runs=${2:-5}
  "$build/tools/bench/inspect_bench" "$qps" "$runs" "$w/snap.json"
  { "$qv" "$w/snap.json" || true; } | tail -n 1
  echo "qp-validate SNAPSHOT ($qps QPs), median of $runs, wall ms:        $(median_ms "$runs" "$qv" "$w/snap.json")"
  echo "qp-validate --json SNAPSHOT ($qps QPs), median of $runs, wall ms: $(median_ms "$runs" "$qv" --json "$w/snap.json")"
  exit 0
fi

n=${2:-200}
runs=${3:-5}
: "${QPC_DEV0:?--lab runs inside tools/lab/lab-run}"
# -u 20: a QP timeout of 4.3 s; with the default 67 ms the ACKs of many busy
# QPs under TCG come back too late and rxe moves QPs to ERR after 7 retries
# (docs/benchmarks.md, tools/bench/busy_pairs.sh).
start_write_bw_pairs "$n" 600 -u 20
echo "$k RC QPs connected by ib_write_bw -q $n -t 16 -u 20 in $(($(date +%s) - start)) s (traffic running)"
echo "qp-inspect (list), median of $runs, wall ms:                  $(median_ms "$runs" "$qi")"
echo "qp-inspect -o --interval 0.01 (2 listings + file), wall ms:  $(median_ms "$runs" "$qi" -o "$w/fast.json" --interval 0.01)"
echo "rdma resource show qp, median of $runs, wall ms:               $(median_ms "$runs" rdma resource show qp)"
"$qi" -o "$w/snap.json" >/dev/null  # the default: two samples 1 s apart
# Judged with the programs stopped (SIGSTOP): busy-polling perftest holds both
# vCPUs, and tearing 2000 QPs down under TCG takes minutes, so that waits for
# the end.
for p in "${procs[@]}"; do kill -STOP "$p" 2>/dev/null || true; done
echo "qp-validate SNAPSHOT ($((2 * n)) QPs, 1 s apart), median of $runs, wall ms: $(median_ms "$runs" "$qv" "$w/snap.json")"
{ "$qv" "$w/snap.json" || true; } | tail -n 1
