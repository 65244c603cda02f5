#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mesh_lab.sh QP_MESH SCENARIO: qp-mesh under mpirun in the lab (issue 13,
# docs/mesh.md); ranks oversubscribed on the VM's two vCPUs, spread over
# QPC_DEV0 and QPC_DEV1 by local rank.
#
#   rc4       mpirun -np 4, 2 RC QPs per peer: every rank exits 0 after traffic
#             on each of its 3 edges; rank 0 reports 6 of 6 pairs; no QP left
#   uc4, ud4  the same with UC and UD
#   bad_rank  rank 3 forces GID index 0 (link-local IPv6, the others IPv4):
#             every rank exits 5 within the bound, each names the pairs with
#             rank 3 and the finding; nothing modified, no QP left
#   json3     --json: one JSON document per rank, one entry per peer, rank 0
#             with the mesh summary
#   example   QP_MESH is examples/mesh_mpi's binary: -np 4, every rank lists
#             its 3 edges at RTS with traffic ok
#   qp_connect  (3rd argument: qp-connect) `qp-connect --oob mpi` under
#             mpirun -np 4 hands over to qp-mesh (found in the build tree):
#             the rc4 checks
set -uo pipefail
qpc_root=$(cd "$(dirname "$0")/../.." && pwd)
mesh=${1:?usage: mesh_lab.sh QP_MESH SCENARIO}
scenario=${2:?usage: mesh_lab.sh QP_MESH SCENARIO}
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset (run under tools/lab/lab-run)}"
source "$qpc_root/tools/lab/skip_or_fail.sh"
command -v mpirun >/dev/null || skip_or_fail "mpirun not installed (openmpi-bin)"
# Open MPI refuses a node name like "(none)" (the VM has no hostname).
[[ $(hostname) == "(none)" ]] && hostname qpclab
# Shared memory and TCP between the ranks of one VM; not UCX, which would
# look at the rxe devices itself.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
failed=0
fail() { echo "FAIL ($scenario): $*"; failed=1; }
expect() {  # file text...
  local f=$1 t
  shift
  for t in "$@"; do grep -qF -- "$t" "$f" || fail "'$t' not in ${f##*/}"; done
}
run() {  # np extra-args...: runs the mesh, sets $rc, output in $w/out
  local np=$1
  shift
  local start=$SECONDS
  timeout 240 mpirun --allow-run-as-root --oversubscribe --tag-output "$@" >"$w/out" 2>&1
  rc=$?
  elapsed=$((SECONDS - start))
  cat "$w/out"
  echo "mpirun exit $rc after ${elapsed} s"
}
left_qps() {
  local n
  n=$(rdma resource show qp 2>/dev/null | grep -cvE "type GSI|^$")
  ((n == 0)) || fail "$n QP(s) left after the job: $(rdma resource show qp)"
}
devs=(--devices "$QPC_DEV0,$QPC_DEV1")

case $scenario in
  rc4 | uc4 | ud4 | qp_connect)
    t=${scenario%4}
    if [[ $scenario == qp_connect ]]; then
      t=rc
      run 4 -np 4 "${3:?qp_connect needs qp-connect as 3rd argument}" --oob mpi "${devs[@]}" -t rc -q 2 -n 20
    else
      run 4 -np 4 "$mesh" "${devs[@]}" -t "$t" -q 2 -n 20
    fi
    ((rc == 0)) || fail "mpirun exited $rc, want 0"
    for r in 0 1 2 3; do
      n=$(grep -c "^\[1,$r\]<stdout>:qp-mesh:   rank $r -> rank [0-3] (.*): connected, traffic ok$" "$w/out")
      ((n == 3)) || fail "rank $r: $n of 3 edges connected with traffic ok"
    done
    expect "$w/out" "mesh of 4 ranks: 6 of 6 pair(s) connected, traffic ok on every edge"
    left_qps
    ;;
  bad_rank)
    run 4 -np 3 "$mesh" "${devs[@]}" : -np 1 "$mesh" "${devs[@]}" -g 0
    ((rc == 5)) || fail "mpirun exited $rc, want 5 (validation)"
    # no hang: a rank that waited for a peer that had given up would sit in
    # MPI until mpirun's 240 s timeout
    ((elapsed < 120)) || fail "took ${elapsed} s: a rank waited for a peer that had given up"
    for r in 0 1 2 3; do
      expect "$w/out" "[1,$r]<stderr>:qp-mesh: rank $r: mesh validate: 3 pair(s) failed"
    done
    for r in 0 1 2; do
      expect "$w/out" "FAILED pair rank $r (qpclab) - rank 3 (qpclab): on rank $r: validate"
    done
    expect "$w/out" "error gid-family-mismatch sgid_index"
    # Every rank ran to its verdict; Open MPI's note names the first to exit 5.
    n=$(grep -c "<stderr>:qp-mesh: rank [0-3]: mesh validate" "$w/out")
    ((n == 4)) || fail "$n of 4 ranks reported the verdict"
    left_qps
    ;;
  json3)
    run 3 -np 3 "$mesh" "${devs[@]}" --json
    ((rc == 0)) || fail "mpirun exited $rc, want 0"
    python3 "$qpc_root/tools/dev/mpi_rank_output.py" "$w/out" >"$w/json"
    python3 - "$w/json" <<'PY' || fail "JSON check failed"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert sorted(d["rank"] for d in docs) == [0, 1, 2], docs
for d in docs:
    assert d["ok"] is True and d["size"] == 3, d
    assert sorted(p["rank"] for p in d["peers"]) == sorted({0, 1, 2} - {d["rank"]}), d
    assert all(p["connected"] and p["traffic_ok"] for p in d["peers"]), d
    assert d["exchange"]["bytes_sent"] > 0 and d["exchange"]["bytes_received"] > 0, d
root = [d for d in docs if d["rank"] == 0][0]
assert root["mesh"]["pairs"] == 3 and root["mesh"]["pairs_connected"] == 3, root
assert root["mesh"]["failures"] == [], root
assert all("mesh" not in d for d in docs if d["rank"] != 0)
print("json ok:", len(docs), "documents")
PY
    # The same lines against docs/schemas/qp-mesh.schema.json (docs/json.md).
    if python3 -c 'import jsonschema' 2>/dev/null; then
      "$qpc_root/tests/schemas/check_json.py" "$qpc_root/docs/schemas" qp-mesh.schema.json --lines \
        "$w/json" || fail "qp-mesh --json does not match docs/schemas/qp-mesh.schema.json"
    fi
    left_qps
    ;;
  example)
    run 4 -np 4 "$mesh" "$QPC_DEV0,$QPC_DEV1"
    ((rc == 0)) || fail "mpirun exited $rc, want 0"
    n=$(grep -c "<stdout>:rank [0-3] -> rank [0-3]: QP 0x[0-9a-f]* -> 0x[0-9a-f]* on rxe[01], traffic ok" "$w/out")
    ((n == 12)) || fail "$n of 12 edge lines (4 ranks x 3 peers)"
    left_qps
    ;;
  *)
    echo "mesh_lab.sh: unknown scenario '$scenario'" >&2
    exit 2
    ;;
esac
((failed == 0)) && echo "PASS ($scenario)"
exit "$failed"
