#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# published_peers_lab.sh TOOLS_DIR SCENARIO: our own programs' connections
# paired by the peers they publish (issue 41, docs/inspect.md "Published
# peers"). A qp-connect RC pair (server on QPC_DEV0, client on QPC_DEV1) and a
# stock rping pair through `qp-cm` (libqpcm) run at once; each device's QPs
# are snapshotted as one "host" (node-a: QPC_DEV0, node-b: QPC_DEV1, as
# collect_lab.sh does) and `qp-validate --json DIR` pairs them. rxe's tracker
# shows no destination, and libqpcm makes no kernel cm_id, so the published
# peers are the only address evidence. Runs inside tools/lab/lab-run.
#
#   published  every one of the four QPs has its process's peers file and a
#              dgid with dest_source "published" in its snapshot; each of the
#              two connections is one pair whose `how` includes "gid", none
#              of the four QPs without a peer or ambiguous
#   opt_out    the same with QPCONNECT_PUBLISH_PEERS=0: no peers file, no
#              dgid, and the published scenario's check fails on exactly
#              that (no pair by gid): the feature off makes the test fail
# Both end with every QP destroyed (no QP left).
set -uo pipefail

tools=${1:?usage: published_peers_lab.sh TOOLS_DIR SCENARIO}
scenario=${2:?usage: published_peers_lab.sh TOOLS_DIR SCENARIO}
qc=$tools/qp-connect/qp-connect
qcm=$tools/qp-cm/qp-cm
qi=$tools/qp-inspect/qp-inspect
qv=$tools/qp-validate/qp-validate
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset (run under tools/lab/lab-run)}"
: "${QPC_DEV1:?QPC_DEV1 unset}" "${QPC_IP0:?QPC_IP0 unset}" "${QPC_IP1:?QPC_IP1 unset}"
case $scenario in
  published) unset QPCONNECT_PUBLISH_PEERS ;;
  opt_out) export QPCONNECT_PUBLISH_PEERS=0 ;;
  *)
    echo "published_peers_lab.sh: SCENARIO must be published or opt_out" >&2
    exit 2
    ;;
esac

. "$(dirname "$0")/lab_qps.sh" # scratch_and_procs, check_no_qps, wait_listening
scratch_and_procs
fail=0

die() {
  echo "FAIL ($scenario): $*"
  for f in "$w"/*.out "$w"/*.log; do [[ -s $f ]] && { echo "--- ${f##*/}"; tail -n 20 "$f"; }; done
  exit 1
}

# The pid of the QP owner among $1's descendants (qp-cm may run the
# program as a child): the pid the tracker lists for a QP on device $2.
owner_of() {
  local p
  for p in $1 $(pgrep -P "$1") $(pgrep -P "$(pgrep -P "$1" | head -n 1)" 2>/dev/null); do
    rdma resource show qp 2>/dev/null | grep -q "link $2/.* pid $p " && { echo "$p"; return; }
  done
}

# The qp-connect RC pair: traffic for 60 s (killed once judged).
start qc_server "$qc" -d "$QPC_DEV0" -p 18641 -D 60 --timeout 60
qcs=$last
wait_listening 18641 || die "qp-connect's server does not listen"
start qc_client "$qc" -d "$QPC_DEV1" -p 18641 -D 60 --timeout 60 "$QPC_IP0"
qcc=$last
# The rping pair through libqpcm (qp-cm, no device map: rxe's own addresses).
start rp_server "$qcm" --log "$w/rp_server.log" -- rping -s -a "$QPC_IP0" -p 7180 -C 100000000
rps=$last
wait_listening 7180 || die "rping (qp-cm) does not listen"
start rp_client "$qcm" --log "$w/rp_client.log" -- rping -c -a "$QPC_IP0" -I "$QPC_IP1" -p 7180 \
  -C 100000000
rpc=$last

for ((i = 0; i < 300; i++)); do
  n=$(rdma resource show qp 2>/dev/null | grep -cE "type RC state (RTR|RTS)")
  ((n >= 4)) && break
  for p in "$qcs" "$qcc" "$rps" "$rpc"; do kill -0 "$p" 2>/dev/null || die "pid $p ended early"; done
  sleep 0.2
done
((n >= 4)) || die "$n of 4 RC QPs connected after 60 s: $(rdma resource show qp)"
sleep 1
owners=()
for pd in "$qcs:$QPC_DEV0" "$qcc:$QPC_DEV1" "$rps:$QPC_DEV0" "$rpc:$QPC_DEV1"; do
  o=$(owner_of "${pd%%:*}" "${pd#*:}")
  [[ -n $o ]] || die "no QP of pid ${pd%%:*} on ${pd#*:}: $(rdma resource show qp)"
  owners+=("$o")
done
echo "QP owners: qp-connect ${owners[0]} (node-a) ${owners[1]} (node-b), rping ${owners[2]} (node-a) ${owners[3]} (node-b)"

# The peers files, where qp-inspect looks for them (root: uid 0).
files=0
for o in "${owners[@]}"; do
  for d in "${QPCONNECT_PEERS_DIR:-}" /run/user/0/qpconnect/peers /tmp/qpconnect-0/peers; do
    [[ -n $d && -f $d/$o.jsonl ]] || continue
    files=$((files + 1))
    echo "--- $d/$o.jsonl"
    cat "$d/$o.jsonl"
  done
done

mkdir "$w/snaps"
"$qi" -d "$QPC_DEV0" --host node-a -o "$w/snaps/node-a.json" >"$w/inspect_a.out" 2>&1 ||
  die "qp-inspect on node-a exited $?"
"$qi" -d "$QPC_DEV1" --host node-b -o "$w/snaps/node-b.json" >"$w/inspect_b.out" 2>&1 ||
  die "qp-inspect on node-b exited $?"
"$qv" --json "$w/snaps" >"$w/validate.json" 2>"$w/validate.err"
"$qv" "$w/snaps" >"$w/validate.out" 2>&1
grep -E "^pair|^  (a|b):|published" "$w/validate.out" | head -n 20

# check: 0 when every QP of the four owners has a published dgid and each
# connection is one pair by gid; prints what is missing otherwise.
check() {
  python3 - "$w/validate.json" "$w/snaps" "${owners[@]}" <<'PY'
import glob, json, sys
doc = json.load(open(sys.argv[1]))
owners = [int(p) for p in sys.argv[3:]]
want = {frozenset(owners[0:2]): "qp-connect", frozenset(owners[2:4]): "rping (libqpcm)"}
bad = []
for path in sorted(glob.glob(sys.argv[2] + "/*.json")):
    for q in json.load(open(path))["samples"][-1]["qps"]:
        if q["pid"] in owners and q.get("dest_source") != "published":
            bad.append(f"{path.rsplit('/', 1)[1]}: QP {q['lqpn']} of pid {q['pid']} has no "
                       f"published destination (dgid {q.get('dgid')})")
found = {}
for p in doc["pairs"]:
    pids = frozenset((p["a"]["pid"], p["b"]["pid"]))
    if pids in want:
        found[want[pids]] = p["how"]
        print(f"{want[pids]}: {p['a']['host']} pid {p['a']['pid']} <-> {p['b']['host']} "
              f"pid {p['b']['pid']}: {p['how']} (unique {p['unique']})")
        if "gid" not in p["how"]:
            bad.append(f"{want[pids]}: paired by '{p['how']}', not by gid")
for name in want.values():
    if name not in found:
        bad.append(f"{name}: not paired")
for lone in doc["without_peer"]:
    if lone["qp"]["pid"] in owners:
        bad.append(f"{lone['status']}: pid {lone['qp']['pid']} QP {lone['qp']['qpn']}")
for b in bad:
    print("  missing: " + b)
sys.exit(1 if bad else 0)
PY
}

case $scenario in
  published)
    ((files == 4)) || die "$files of 4 peers files found"
    check || die "our connections are not all paired by their published peers"
    ;;
  opt_out)
    ((files == 0)) || die "$files peers file(s) written with QPCONNECT_PUBLISH_PEERS=0"
    if check; then
      die "paired by gid without published peers: the published check cannot fail"
    fi
    echo "as it must with publishing off: the published check fails (no destination, no pair by gid)"
    ;;
esac

# Every QP destroyed once the programs end; qp-connect's peers files go with
# its QPs (the TERMed rping's stays, ignored by its start time once the pid
# is reused).
for p in "$qcc" "$qcs" "$rpc" "$rps"; do kill -TERM "$p" 2>/dev/null; done
for p in "$qcc" "$qcs" "$rpc" "$rps"; do wait "$p" 2>/dev/null; done
procs=()
for ((i = 0; i < 100; i++)); do
  (($(qps_left) == 0)) && break
  sleep 0.1
done
check_no_qps "$scenario"
((fail == 0)) || die "QPs left"
echo "PASS ($scenario)"
