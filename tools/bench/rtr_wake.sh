#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Why one RoCE RTR costs milliseconds in the lab when the guest is otherwise
# idle: for a user QP's RTR on RoCE the kernel resolves the peer's MAC through
# rdma_addr_find_l2_eth_by_grh(), which queues the lookup on the "ib_addr"
# workqueue and sleeps until it completes (drivers/infiniband/core/addr.c);
# in the TCG guest, waking that worker on an idle vCPU is slow.
#
# Runs tools/bench/connect_bound.c (plain libibverbs) for N pairs, ROUNDS
# times each way in ONE lab boot: with the second vCPU idle, and with a busy
# loop (`yes`) keeping it awake. Prints each run's RTR step (2 x N RTRs) and
# the medians.
#
# Usage: tools/bench/rtr_wake.sh BUILD_DIR [N] [ROUNDS]   (default 300, 3)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [[ ${1:-} == --inside ]]; then
  bound=$2 n=$3 rounds=$4
  echo "# kernel $(uname -r), $(nproc) vCPU(s)"
  for r in $(seq 1 "$rounds"); do
    line=$("$bound" "$n" "$QPC_DEV0" "$QPC_GID0" "$QPC_DEV1" "$QPC_GID1") || exit 1
    echo "RESULT mode=idle round=$r ${line#bound }"
    yes >/dev/null &
    y=$!
    line=$("$bound" "$n" "$QPC_DEV0" "$QPC_GID0" "$QPC_DEV1" "$QPC_GID1")
    rc=$?
    kill "$y"
    wait "$y" 2>/dev/null
    ((rc == 0)) || exit 1
    echo "RESULT mode=busy round=$r ${line#bound }"
  done
  exit 0
fi

build=$(cd "${1:?usage: rtr_wake.sh BUILD_DIR [N] [ROUNDS]}" && pwd)
n=${2:-300} rounds=${3:-3}
mkdir -p "$build/tools/bench"
cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -o "$build/tools/bench/connect_bound" \
  "$here/connect_bound.c" -libverbs || exit 1
out=$("$root/tools/lab/lab-run" --timeout 900 -- "$here/rtr_wake.sh" --inside \
  "$build/tools/bench/connect_bound" "$n" "$rounds") || { echo "$out"; exit 1; }
echo "$out"
python3 - "$n" <<PY
import statistics, sys
n = int(sys.argv[1])
rtr = {"idle": [], "busy": []}
for line in """$out""".splitlines():
    if line.startswith("RESULT "):
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        rtr[f["mode"]].append(float(f["rtr_s"]))
for mode, xs in rtr.items():
    m = statistics.median(xs)
    print("%s: RTR of %d QPs, median %.3f s (%.2f ms per RTR) over %d rounds" % (mode, 2 * n, m, 1000 * m / (2 * n), len(xs)))
PY
