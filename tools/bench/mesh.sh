#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark (issue 13): the MPI mesh at 2, 4 and 8 ranks (oversubscribed in
# the lab's VM, ranks over rxe0/rxe1): connect time and bytes exchanged per
# rank, from qp-mesh --json (--no-verify: connect only).
#
#   tools/lab/lab-run --mem 1024 -- tools/bench/mesh.sh BUILD_DIR [QPS] [RANKS...]
#
# Prints one row per rank count: the slowest rank's open/exchange/validate/
# connect times (ms) and the bytes one rank sends in the exchange (the median
# rank's), then the pairs connected. Under TCG with 2 vCPUs, ranks above 2 share
# the CPUs: compare the figures of one boot, as ratios.
set -euo pipefail
qpc_root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: mesh.sh BUILD_DIR [QPS] [RANKS...]}
qps=${2:-1}
shift $(($# >= 2 ? 2 : 1))
ranks=("$@")
((${#ranks[@]})) || ranks=(2 4 8)
: "${QPC_DEV0:?run inside tools/lab/lab-run}"
[[ $(hostname) == "(none)" ]] && hostname qpclab
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
printf '%-6s %-5s %10s %10s %10s %10s %12s %12s %8s\n' ranks qps open_ms exch_ms valid_ms conn_ms \
  bytes_sent bytes/peer pairs
for np in "${ranks[@]}"; do
  start=$(date +%s%N)
  mpirun --allow-run-as-root --oversubscribe --tag-output -np "$np" "$build/tools/qp-mesh/qp-mesh" \
    --devices "$QPC_DEV0,$QPC_DEV1" -q "$qps" --no-verify --json >"$w/out" 2>&1 ||
    { cat "$w/out"; exit 1; }
  wall=$((($(date +%s%N) - start) / 1000000))
  python3 "$qpc_root/tools/dev/mpi_rank_output.py" "$w/out" >"$w/json"
  python3 - "$w/json" "$np" "$qps" "$wall" <<'PY'
import json, statistics, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
np, qps, wall = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert len(docs) == np and all(d["ok"] for d in docs), docs
t = lambda k: max(d["timings_ms"][k] for d in docs)
sent = statistics.median(d["exchange"]["bytes_sent"] for d in docs)
root = [d for d in docs if d["rank"] == 0][0]["mesh"]
print(f'{np:<6} {qps:<5} {t("open"):10.1f} {t("exchange"):10.1f} {t("validate"):10.1f} '
      f'{t("connect"):10.1f} {sent:12.0f} {sent / (np - 1):12.1f} {root["pairs_connected"]:>3}/{root["pairs"]:<3}'
      f'  (mpirun wall {wall} ms)')
PY
done
n=$(rdma resource show qp | grep -cvE "type GSI|^$" || true)
echo "QPs left after the runs: $n"
