#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 29's N = 1 target ("no slower than native rdma_cm"), measured with
# many rounds in one lab boot: stock `cmtime -c 1`, natively and through
# qp-cm, alternating, each round a fresh server and client (as a user's first
# connection is); cmtime's own "connect" step per round, the medians, and the
# ratio native / qpcm (the connect rate of qpcm relative to native). A round
# whose client prints no connect step is dropped and counted.
#
# Usage: tools/bench/cmtime_n1.sh BUILD_DIR [ROUNDS]   (default 10)
#        tools/bench/cmtime_n1.sh --from RAW          (the summary of kept RESULT lines)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ ${1:-} == --inside ]]; then
  build=$2 rounds=$3 port=7700
  echo "# kernel $(uname -r), $(nproc) vCPU(s); cmtime -c 1, $rounds rounds, native and qpcm alternating"
  one() {  # one KIND
    local kind=$1 wrap=() s c
    port=$((port + 1))
    [[ $kind == qpcm ]] && wrap=("$build/tools/qp-cm/qp-cm" --)
    "${wrap[@]}" cmtime -b "$QPC_IP0" -p $port >/dev/null 2>&1 &
    s=$!
    if [[ $kind == native ]]; then
      sleep 0.5  # no TCP socket to wait for
    else
      for _ in $(seq 100); do ss -ltn | grep -q ":$port " && break; sleep 0.05; done
    fi
    c=$(timeout 60 "${wrap[@]}" cmtime -s "$QPC_IP0" -b "$QPC_IP1" -p $port -c 1 2>&1 |
      awk -F: '/^connect /{split($2, f, " "); print f[1]}')
    kill $s 2>/dev/null
    wait $s 2>/dev/null
    echo "RESULT kind=$kind connect_ms=${c:-failed}"
  }
  for _ in $(seq "$rounds"); do
    one native
    one qpcm
  done
  exit 0
fi
if [[ ${1:-} == --from ]]; then
  raw=${2:?usage: cmtime_n1.sh --from RAW}
else
  build=$(cd "${1:?usage: cmtime_n1.sh BUILD_DIR [ROUNDS]}" && pwd)
  raw=$(mktemp)
  trap 'rm -f "$raw"' EXIT
  "$here/../lab/lab-run" --mem 1024 --timeout 1200 -- "$here/cmtime_n1.sh" --inside "$build" "${2:-10}" >"$raw" ||
    { cat "$raw"; echo "cmtime_n1.sh: the lab run failed" >&2; exit 1; }
  cat "$raw"
fi
python3 -c '
import statistics, sys
runs, failed = {}, {}
for line in sys.stdin:
    if not line.startswith("RESULT "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    if f["connect_ms"] == "failed":
        failed[f["kind"]] = failed.get(f["kind"], 0) + 1
    else:
        runs.setdefault(f["kind"], []).append(float(f["connect_ms"]))
for k in ("native", "qpcm"):
    v = runs.get(k, [])
    print("%-6s median %s ms over %d good runs, %d failed" % (k, "%.1f" % statistics.median(v) if v else "-", len(v), failed.get(k, 0)))
if runs.get("native") and runs.get("qpcm"):
    print("connect rate qpcm / native at N = 1: %.2f" % (statistics.median(runs["native"]) / statistics.median(runs["qpcm"])))
' <"$raw"
