#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qp-connect at N QPs from two builds, alternating in ONE lab boot: did a
# change make qp-connect itself slower? (issue 38: qp-connect must not pay
# for the shared core.)
#
# Usage: tools/bench/connect_ab.sh [--mem MiB] [--out FILE] [--verify] BUILD_A BUILD_B N ROUNDS
#        tools/bench/connect_ab.sh --from FILE   (the summary of a kept --out file)
#   BUILD_A, BUILD_B: build directories holding tools/qp-connect/qp-connect
#   (build only that target for an old commit: QPC_BUILD_TARGETS=qp-connect
#   tools/dev/build.sh in a worktree of it).
# Each round runs A then B (the order swapped every other round): a server
# on rxe0 and a client on rxe1, `qp-connect --qps N --no-verify --json` (with
# --verify: the traffic proof too, as docs/benchmarks.md's 1,000-QP run has it:
# -s 64 -r 2 -n 2), and
# records the client's process wall (fork to exit), its in-process time to
# the barrier and its phases (timings_ms). A run that failed is dropped (not
# timed) and counted; after each run no RC QP may be left. Prints every raw
# RESULT line, then per build the medians and the ratio B / A of the walls;
# --out FILE keeps both, with the commit each build was configured from.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [[ ${1:-} == --inside ]]; then
  shift
  a=$1 b=$2 n=$3 rounds=$4 proof=${5:---no-verify}
  [[ $proof == verify ]] && proof="-s 64 -r 2 -n 2"
  ns_now() { date +%s%N; }
  rc_left() { rdma resource show qp 2>/dev/null | grep -c ' type RC ' || true; }
  run_one() { # LABEL BUILD ROUND
    local label=$1 qpc=$2/tools/qp-connect/qp-connect round=$3 port=$((21000 + $3)) spid t0 t1 crc src
    "$qpc" -d "$QPC_DEV0" -p "$port" --qps "$n" $proof --json --timeout 300 \
      >/tmp/ab_server.json 2>/tmp/ab_server.err &
    spid=$!
    for _ in $(seq 1 200); do
      ss -ltn 2>/dev/null | grep -q ":$port " && break
      sleep 0.05
    done
    t0=$(ns_now)
    timeout 900 "$qpc" -d "$QPC_DEV1" -p "$port" --qps "$n" $proof --json --timeout 300 \
      "$QPC_IP0" >/tmp/ab_client.json 2>/tmp/ab_client.err
    crc=$?
    t1=$(ns_now)
    wait "$spid"
    src=$?
    if [[ $crc != 0 || $src != 0 ]]; then
      echo "RESULT build=$label round=$round n=$n failed client_exit=$crc server_exit=$src"
      tail -c 1500 /tmp/ab_client.err /tmp/ab_server.err | sed 's/^/# /'
    else
      python3 - "$label" "$round" "$n" "$((t1 - t0))" /tmp/ab_client.json <<'PY'
import json, sys
label, rnd, n, wall_ns, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
t = json.load(open(path))["timings_ms"]
print("RESULT build=%s round=%s n=%d wall_s=%.4f to_barrier_s=%.4f open_ms=%.1f exchange_ms=%.1f "
      "validate_ms=%.1f rtr_ms=%.1f rts_ms=%.1f barrier_ms=%.1f"
      % (label, rnd, n, wall_ns / 1e9, t["to_barrier"] / 1e3, t["open"], t["exchange"],
         t["validate"], t["rtr"], t["rts"], t["barrier"]))
PY
    fi
    echo "RESULT build=$label left rc_qps=$(rc_left)"
  }
  echo "# kernel $(uname -r), $(nproc) vCPU(s); qp-connect --qps $n $proof, $rounds rounds, A and B alternating"
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then run_one A "$a" "$r"; run_one B "$b" "$r"
    else run_one B "$b" "$r"; run_one A "$a" "$r"; fi
  done
  exit 0
fi

mem=1024
out=
from=
proof=--no-verify
while [[ $# -gt 0 ]]; do
  case $1 in
    --mem) mem=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --verify) proof=verify; shift ;;
    -h | --help) sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "connect_ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
summary() {  # summary RAW: per build the medians of the good runs, and B / A
  python3 - "$1" <<'PY'
import re, statistics, sys
runs = {"A": [], "B": []}
failed = {"A": 0, "B": 0}
for line in open(sys.argv[1]):
    m = re.match(r"RESULT build=(\w) round=\d+ n=\d+ (.*)", line)
    if not m:
        continue
    if "failed" in m.group(2):
        failed[m.group(1)] += 1
        continue
    runs[m.group(1)].append(dict(kv.split("=") for kv in m.group(2).split()))
keys = ["wall_s", "to_barrier_s", "open_ms", "exchange_ms", "validate_ms", "rtr_ms", "rts_ms", "barrier_ms"]
print("build  good failed " + " ".join("%12s" % k for k in keys))
med = {}
for b in "AB":
    med[b] = {k: statistics.median(float(r[k]) for r in runs[b]) if runs[b] else float("nan") for k in keys}
    print("%-6s %4d %6d " % (b, len(runs[b]), failed[b]) + " ".join("%12.4f" % med[b][k] for k in keys))
if runs["A"] and runs["B"]:
    print("wall B / A: %.3f" % (med["B"]["wall_s"] / med["A"]["wall_s"]))
PY
}
if [[ -n $from ]]; then
  [[ -r $from ]] || { echo "connect_ab.sh: --from: cannot read '$from'" >&2; exit 2; }
  grep -E '^# (A:|kernel)' "$from"
  summary "$from"
  exit 0
fi
[[ $# -eq 4 ]] || { echo "usage: connect_ab.sh [--mem MiB] [--out FILE] [--verify] BUILD_A BUILD_B N ROUNDS" >&2; exit 2; }
a=$(cd "$1" && pwd) || exit 2
b=$(cd "$2" && pwd) || exit 2
n=$3 rounds=$4
for d in "$a" "$b"; do
  [[ -x $d/tools/qp-connect/qp-connect ]] || { echo "connect_ab.sh: no qp-connect in $d" >&2; exit 2; }
done
commit_of() {  # the commit a build directory was configured from
  local src
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt" 2>/dev/null)
  git -C "${src:-/nonexistent}" rev-parse --short HEAD 2>/dev/null || echo unknown
}
raw=$(mktemp)
{
  echo "# A: $a at $(commit_of "$a"); B: $b at $(commit_of "$b")"
  "$root/tools/lab/lab-run" --mem "$mem" --timeout 3600 -- "$0" --inside "$a" "$b" "$n" "$rounds" "$proof"
} | tee "$raw"
table=$(summary "$raw")
echo "$table"
[[ -n $out ]] && { cat "$raw"; echo "$table" | sed 's/^/# /'; } >"$out"
rm -f "$raw"
