#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark (issue 32 item 3): are busy, healthy RC pairs judged sound?
#
#   tools/lab/lab-run --mem 1536 --timeout 1500 -- tools/bench/busy_pairs.sh \
#       BUILD_DIR [N [SNAPSHOTS [GAP [PERFTEST_ARGS [INSPECT_ARGS...]]]]]
#
# ib_write_bw -q N (default 1000) on each device, with PERFTEST_ARGS (one
# word list, e.g. "-u 20"; default none) on both sides: N RC pairs rxe0 <->
# rxe1, traffic running for the whole run, both vCPUs busy-polling. Then
# SNAPSHOTS (default 3) snapshots, GAP seconds apart (default 0), each taken
# with `qp-inspect -o` (INSPECT_ARGS added; default none: the default two
# samples 1 s apart) while the traffic runs and judged by `qp-validate --json`. Prints per snapshot the verdict line, the rules that fired and, for
# the first pairs judged unsound, what the judge saw (each QP's PSNs in every
# sample, the evidence) and whether the pair moved in the next snapshot.
# Exits 0 when every pair of every snapshot was judged sound, else 1.
# Figures go to docs/benchmarks.md (issue 32).
set -euo pipefail
build=${1:?usage: busy_pairs.sh BUILD_DIR [N [SNAPSHOTS [GAP [PERFTEST_ARGS [INSPECT_ARGS...]]]]]}
n=${2:-1000}
snaps=${3:-3}
gap=${4:-0}
read -ra perftest <<<"${5:-}"
shift $(($# < 5 ? $# : 5))
qi=$build/tools/qp-inspect/qp-inspect
qv=$build/tools/qp-validate/qp-validate
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${QPC_DEV0:?runs inside tools/lab/lab-run}"
source "$here/write_bw_pairs.sh"

start_write_bw_pairs "$n" 3600 "${perftest[@]}"
echo "$k RC QPs connected by ib_write_bw -q $n -t 16 ${perftest[*]} in $(($(date +%s) - start)) s; warm-up 5 s"
sleep 5
for ((s = 1; s <= snaps; s++)); do
  ((s == 1)) || sleep "$gap"
  t0=$(date +%s%N)
  "$qi" -o "$w/snap$s.json" "$@" >/dev/null
  t1=$(date +%s%N)
  "$qv" --json "$w/snap$s.json" >"$w/judged$s.json" || true
  echo "snapshot $s at $(($(date +%s) - start)) s: qp-inspect -o $* took $(((t1 - t0) / 1000000)) ms;" \
    "QPs in ERR: $(rdma resource show qp | grep -c "type RC state ERR" || true)"
done
kill -0 "$client" || { echo "ib_write_bw ended during the snapshots" >&2; exit 1; }
for side in server client; do
  grep -v -E '^ *[0-9]+ +[0-9]|^-+$' "$w/$side.out" | grep -i -E "error|fail|status" | sort | uniq -c |
    sed "s/^/ib_write_bw $side: /" | head -n 5 || true
done
python3 "$here/busy_pairs_report.py" "$w" "$snaps"
