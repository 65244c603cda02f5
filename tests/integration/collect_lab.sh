#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# collect_lab.sh QP_MESH TOOLS_DIR SCENARIO: the whole-job collection (issue
# 32, docs/inspect.md) on a qp-mesh of four ranks under mpirun, ranks 0 and 2
# on QPC_DEV0, 1 and 3 on QPC_DEV1, rank 2 stopped with SIGSTOP mid-traffic.
# Each device's QPs are collected as one "host" (node-a: QPC_DEV0, node-b:
# QPC_DEV1; rxe in the lab's 6.1 kernel works in the initial network namespace
# only, so namespaces cannot stand for hosts). Runs inside tools/lab/lab-run.
#
#   stopped_at   two qp-inspect --at (the same agreed time), one per "host",
#                each writing DIR/%h.json; `qp-validate --json DIR` names the
#                stopped rank's pid and host in a finding on its QPs; the
#                snapshots' start skew is printed
#   stopped_mpi  the same collection by `mpirun -np 2 qp-inspect-mpi -d
#                DEV0,DEV1 --host node-%r -o JOB` (one rank per "host", a
#                barrier before each sample, rank 0 writes the job file);
#                qp-validate --json JOB names the same pid and host
#   missing_host every host accounted for (issue 41): node-a's snapshot
#                alone, with the job's host list node-a,node-b (--hosts):
#                qp-validate exits 1 naming node-b as having sent no snapshot,
#                with the QPs of node-a whose peers are on node-b (the truth:
#                a snapshot of both devices) pointing at it by elimination,
#                none of them paired; and `mpirun -np 1 qp-inspect-mpi` with
#                Slurm's SLURM_JOB_NODELIST=node-[0-1] writes the list into
#                the job file, whose verdict names node-1
set -uo pipefail
qpc_root=$(cd "$(dirname "$0")/../.." && pwd)
mesh=${1:?usage: collect_lab.sh QP_MESH TOOLS_DIR SCENARIO}
tools=${2:?usage: collect_lab.sh QP_MESH TOOLS_DIR SCENARIO}
scenario=${3:?usage: collect_lab.sh QP_MESH TOOLS_DIR SCENARIO}
qi=$tools/qp-inspect/qp-inspect
qim=$tools/qp-inspect/qp-inspect-mpi
qv=$tools/qp-validate/qp-validate
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset (run under tools/lab/lab-run)}"
source "$qpc_root/tools/lab/skip_or_fail.sh"
. "$(dirname "$0")/lab_qps.sh"  # inspect_both_at
command -v mpirun >/dev/null || skip_or_fail "mpirun not installed (openmpi-bin)"
[[ $scenario == stopped_at || -x $qim ]] || skip_or_fail "qp-inspect-mpi not built (no MPI)"
[[ $(hostname) == "(none)" ]] && hostname qpclab
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
w=$(mktemp -d)
mesh_pid=
stopped=
cleanup() {
  [[ -n $stopped ]] && kill -CONT "$stopped" 2>/dev/null
  [[ -n $mesh_pid ]] && kill "$mesh_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$w"
}
trap cleanup EXIT
fail() {
  echo "FAIL ($scenario): $*"
  for f in "$w"/*.out; do [[ -s $f ]] && { echo "--- ${f##*/}"; tail -n 30 "$f"; }; done
  exit 1
}

# The mesh: traffic that outlasts the test (each wait up to 300 s).
mpirun --allow-run-as-root --oversubscribe -np 4 "$mesh" --devices "$QPC_DEV0,$QPC_DEV1" -t rc \
  -q 1 -n 1000000 --timeout 300 >"$w/mesh.out" 2>&1 &
mesh_pid=$!
for ((i = 0; i < 600; i++)); do
  n=$(rdma resource show qp 2>/dev/null | grep -c "type RC state RTS")
  ((n >= 12)) && break
  kill -0 "$mesh_pid" 2>/dev/null || fail "the mesh ended before its 12 QPs were at RTS"
  sleep 0.2
done
((n >= 12)) || fail "$n of 12 mesh QPs at RTS after 120 s"
for p in $(pgrep -x qp-mesh); do
  grep -qz '^OMPI_COMM_WORLD_RANK=2$' "/proc/$p/environ" 2>/dev/null && stopped=$p
done
[[ -n $stopped ]] || fail "rank 2's process not found"
sleep 2
kill -STOP "$stopped"
echo "rank 2 is pid $stopped, on $QPC_DEV0 (node-a); stopped"
sleep 2

case $scenario in
  stopped_at)
    mkdir "$w/snaps"
    at=$(($(date +%s) + 3))
    out=$(inspect_both_at "$w/snaps" "$at") || fail "$out"
    job=$w/snaps
    ;;
  stopped_mpi)
    mpirun --allow-run-as-root --oversubscribe -np 2 "$qim" -d "$QPC_DEV0,$QPC_DEV1" \
      --host "node-%r" -o "$w/job.json" >"$w/collect.out" 2>&1 || fail "qp-inspect-mpi exited $?"
    cat "$w/collect.out"
    grep -q "job snapshot of 2 rank(s)" "$w/collect.out" || fail "no job snapshot line"
    # node-0 is rank 0 (local rank 0: QPC_DEV0), node-1 rank 1.
    job=$w/job.json
    ;;
  missing_host)
    "$qi" -d "$QPC_DEV0,$QPC_DEV1" --host lab -o "$w/both.json" >"$w/both.out" 2>&1 ||
      fail "qp-inspect of both devices exited $?"
    "$qi" -d "$QPC_DEV0" --host node-a -o "$w/node-a.json" >"$w/a.out" 2>&1 ||
      fail "qp-inspect on node-a exited $?"
    # Slurm's node list in the rank's environment only (mpirun itself would
    # take it for a Slurm allocation).
    mpirun --allow-run-as-root --oversubscribe -np 1 env SLURM_JOB_NODELIST='node-[0-1]' "$qim" \
      -d "$QPC_DEV0,$QPC_DEV1" --host "node-%r" -o "$w/job.json" >"$w/collect.out" 2>&1 ||
      fail "qp-inspect-mpi exited $?"
    cat "$w/collect.out"
    grep -q "job snapshot of 1 rank(s), .* QPs, a host list of 2," "$w/collect.out" ||
      fail "the job file carries no host list"
    "$qv" --json "$w/both.json" >"$w/truth.json" 2>"$w/truth.err"
    "$qv" --hosts node-a,node-b "$w/node-a.json" >"$w/validate.out" 2>&1
    rc=$?
    ((rc == 1)) || fail "qp-validate --hosts node-a,node-b node-a.json exited $rc, not 1"
    sed -n '1,/^inputs:/p' "$w/validate.out"
    "$qv" --json --hosts node-a,node-b "$w/node-a.json" >"$w/validate.json" 2>"$w/validate.err"
    "$qv" "$w/node-a.json" >"$w/alone.out" 2>&1
    "$qv" --json "$w/job.json" >"$w/job-validate.json" 2>"$w/job-validate.err"
    rc=$?
    ((rc == 1)) || fail "qp-validate job.json exited $rc, not 1"
    python3 - "$w" "$QPC_DEV0" "$QPC_DEV1" <<'PY' || fail "node-b is not accounted for"
import json, re, sys
w, dev0, dev1 = sys.argv[1:]
truth = json.load(open(f"{w}/truth.json"))
# The mesh's QPs on node-a (DEV0) whose peer is on node-b (DEV1).
cross = sorted(p["a"]["qpn"] if p["a"]["device"] == dev0 else p["b"]["qpn"]
               for p in truth["pairs"]
               if {p["a"]["device"], p["b"]["device"]} == {dev0, dev1}
               and p["a"]["comm"] == "qp-mesh")
assert len(cross) == 4, f"the truth: {cross} (4 QPs of node-a talk to node-b)"
doc = json.load(open(f"{w}/validate.json"))
s = doc["job_summary"]
print("summary:", s["text"].splitlines()[1])
assert s["listed_hosts"] == 2, s
assert [m["host"] for m in s["missing_hosts"]] == ["node-b"], s["missing_hosts"]
m = s["missing_hosts"][0]
assert m["pointing_qps"] == len(cross) and m["pointing_hosts"] == 1, (m, cross)
assert m["text"].startswith(f"node-b sent no snapshot: {len(cross)} QPs on 1 host point at it "
                            "(by elimination"), m["text"]
assert doc["summary"]["exit_code"] == 1, doc["summary"]
paired = {q["qpn"] for p in doc["pairs"] for q in (p["a"], p["b"])}
assert not paired & set(cross), f"node-a's QPs towards node-b paired: {sorted(paired & set(cross))}"
lone = {e["qp"]["qpn"] for e in doc["without_peer"] if e["status"] == "dangling"}
assert set(cross) <= lone, f"dangling: {sorted(lone)}, towards node-b: {cross}"
# Without the list nothing says node-b exists.
alone = open(f"{w}/alone.out").read()
assert "sent no snapshot" not in alone, alone.splitlines()[:3]
# The job file of one rank under Slurm's node list names the other.
job = json.load(open(f"{w}/job-validate.json"))["job_summary"]
assert [m["host"] for m in job["missing_hosts"]] == ["node-1"], job["missing_hosts"]
print(f"named: node-b ({m['pointing_qps']} QPs of node-a point at it: QPs {cross}); "
      f"the job file's list names node-1")
PY
    echo "PASS ($scenario)"
    exit 0
    ;;
  *)
    echo "collect_lab.sh: unknown scenario '$scenario'" >&2
    exit 2
    ;;
esac

"$qv" "$job" >"$w/validate.out" 2>&1
"$qv" --json "$job" >"$w/validate.json" 2>"$w/validate.err"
grep -E "^note: the 2 snapshots|^inputs|^  " "$w/validate.out" | head -n 8
host_a=node-a
[[ $scenario == stopped_mpi ]] && host_a=node-0
python3 - "$w/validate.json" "$stopped" "$host_a" <<'PY' || fail "the stopped rank is not named"
import json, sys
doc = json.load(open(sys.argv[1]))
pid, host = int(sys.argv[2]), sys.argv[3]
named = [f for f in doc["live_findings"]
         if f["severity"] in ("error", "warning") and f["qp"]["pid"] == pid
         and f["qp"]["host"] == host]
for f in named:
    print(f"{f['severity']} {f['id']}: {f['message']}")
assert named, [(f["id"], f["qp"]["pid"], f["qp"]["host"]) for f in doc["live_findings"]]
assert all(f["id"] in ("receiver-not-ready", "process-stopped") for f in named), named
# Every finding that is an error or a warning is about the stopped rank's
# QPs or names them as the peer.
others = [f for f in doc["live_findings"] if f["severity"] in ("error", "warning")
          and f["qp"]["pid"] != pid and (f["peer"] or {}).get("pid") != pid]
assert not others, others
hosts = sorted({q["host"] for p in doc["pairs"] for q in (p["a"], p["b"])})
assert hosts == sorted({host, "node-b" if host == "node-a" else "node-1"}), hosts
print(f"named: pid {pid} on {host} in {len(named)} finding(s); {len(doc['pairs'])} pairs")
PY
grep -q "snapshots' first samples started within" "$w/validate.out" ||
  fail "qp-validate printed no skew note"
echo "PASS ($scenario)"
