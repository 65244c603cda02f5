#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark (issue 19): the cost of SA PathRecord queries against OpenSM on an
# ibsim fabric of N HCAs (default 1000: leaf switches of 32 HCAs under one core
# switch), from Hca2:
#   - one query: `qp-info --path` as a process (median of R runs), next to
#     `saquery -p --src-to-dst` for the same path
#   - N-1 queries, one per other HCA, through one umad channel (sa_path_bench)
# Usage: tools/bench/sa_paths.sh BUILD_DIR [N] [R]
# Needs ibsim-utils, libumad2sim0, opensm, infiniband-diags (tools/dev/deps.sh).
set -euo pipefail
build=$(realpath "$1")
n=${2:-1000}
runs=${3:-21}
qp_info=$build/tools/qp-info/qp-info
bench=$build/tools/bench/sa_path_bench
source "$(dirname "$0")/../../tests/sim/sim_env.sh"
sim_require

work=$(mktemp -d)
fabric=$work/fabric.net
python3 - "$n" >"$fabric" <<'PY'
import sys
n = int(sys.argv[1])
per_leaf = 32
leaves = (n + per_leaf - 1) // per_leaf
print(f'Switch\t{leaves}\t"Core"')
for l in range(leaves):
    print(f'[{l + 1}]\t"Leaf{l + 1}"[{per_leaf + 1}]')
print()
for l in range(leaves):
    print(f'Switch\t{per_leaf + 1}\t"Leaf{l + 1}"')
    for p in range(per_leaf):
        h = l * per_leaf + p + 1
        if h <= n:
            print(f'[{p + 1}]\t"Hca{h}"[1]')
    print(f'[{per_leaf + 1}]\t"Core"[{l + 1}]')
    print()
for h in range(1, n + 1):
    l, p = divmod(h - 1, per_leaf)
    print(f'Hca\t1\t"Hca{h}"\n[1]\t"Leaf{l + 1}"[{p + 1}]\n')
PY
SIM_MASTER_TIMEOUT=300
t0=$(date +%s%N)
sim_start "$fabric" || exit 1
echo "fabric: $n HCAs, $(( (n + 31) / 32 )) leaf switches + 1 core; OpenSM MASTER with LIDs in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
# MASTER comes before every port is programmed: wait until the last HCA has a LID.
for _ in $(seq 1 600); do [[ "$(sim_lid "Hca$n")" =~ ^[1-9] ]] && break; sleep 0.5; done
lid2=$(sim_lid Hca2)
lidn=$(sim_lid "Hca$n")
echo "Hca2 LID $lid2, Hca$n LID $lidn; max LID $(( n + (n + 31) / 32 + 1 ))"

source "$(dirname "$0")/median_ms.sh"
median_decimals=1  # wall ms to a tenth
echo "one query, median of $runs runs, wall ms (process start, umad2sim attach, query):"
echo "  qp-info --path $lidn:                      $(median_ms sim_run Hca2 "$qp_info" --path "$lidn")"
echo "  saquery -p --src-to-dst $lid2:$lidn:        $(median_ms sim_run Hca2 saquery -p --src-to-dst "$lid2:$lidn")"
echo "  qp-info --help (process start, umad2sim preloaded): $(median_ms sim_run Hca2 "$qp_info" --help)"
maxlid=$(( n + (n + 31) / 32 + 1 ))
echo "every LID 1..$maxlid but Hca2's through one channel (HCAs and switches):"
sim_run Hca2 "$bench" 1 "$maxlid"
rm -rf "$work"
