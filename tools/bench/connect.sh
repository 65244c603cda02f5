#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Connecting N RC QP pairs (issue 15): the verbs bound, qp-connect end to end
# and rdma_cm (stock cmtime), for each N, in ONE lab boot; then a table with
# the ratios and a plot (docs/performance.md).
#
# Usage: tools/bench/connect.sh [--mem MiB] [--out DIR] [--from RAW] BUILD_DIR [N...]
#   (default N: 1 10 100 1000 10000; guest memory default 1024 MiB)
# On the host it compiles tools/bench/connect_bound.c (plain libibverbs) into
# BUILD_DIR/tools/bench/, runs itself inside the lab, keeps the raw lines in
# DIR/connect.raw (default BUILD_DIR/bench-connect), prints the table, and
# draws DIR/connect.png with gnuplot if it is installed. --from RAW redoes the
# table and plot from a kept connect.raw without a lab run.
#
# Inside the lab (QPC_LAB set, --inside), for each N:
#   bound    connect_bound N: ibv_create_qp + INIT + RTR + RTS of 2 x N QPs on
#            rxe0/rxe1 in one thread, no exchange;
#   ours     qp-connect --qps N --no-verify --json, server on rxe0, client on
#            rxe1 over TCP: the client's in-process time from the start of
#            Run() past the barrier (timings_ms.to_barrier) and its process
#            wall (fork to exit), and its peak RSS;
#   rdma_cm  cmtime -c N, server bound to rxe0's address, client to rxe1's:
#            the client's process wall;
#   pool     pool_bench N ROUNDS (tools/bench/pool_bench.cc, built with the
#            project): two owning Connectors in one process reconnect N pairs
#            by Connector::Recycle + Connect against cold Open + Connect +
#            destroy, median per round of each;
# and after each, `rdma resource show qp` must list no RC QP. A run that
# failed is left out of the table (not timed: a run that fails fast would
# look fast) and counted below it.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [[ ${1:-} == --inside ]]; then
  shift
  build=$1
  shift
  qpc=$build/tools/qp-connect/qp-connect
  bound=$build/tools/bench/connect_bound
  ns_now() { date +%s%N; }
  rc_left() { rdma resource show qp 2>/dev/null | grep -c ' type RC ' || true; }
  echo "# kernel $(uname -r), $(nproc) vCPU(s), $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
  echo "# qp-connect --help alone: $( { t0=$(ns_now); "$qpc" --help >/dev/null; t1=$(ns_now); echo $(( (t1 - t0) / 1000000 )); } ) ms wall"
  for n in "$@"; do
    # The bound.
    if line=$("$bound" "$n" "$QPC_DEV0" "$QPC_GID0" "$QPC_DEV1" "$QPC_GID1" 2>&1); then
      echo "RESULT kind=bound ${line#bound }"
    else
      echo "RESULT kind=bound n=$n failed exit=$?"
      echo "$line" | tail -n 5 | sed 's/^/# connect_bound: /'
    fi
    echo "RESULT kind=left after=bound n=$n rc_qps=$(rc_left)"

    # qp-connect: server first, client once the server listens.
    port=$((20000 + n % 10000))
    "$qpc" -d "$QPC_DEV0" -p "$port" --qps "$n" --no-verify --json --timeout 300 \
      >/tmp/bench_server.json 2>/tmp/bench_server.err &
    spid=$!
    for _ in $(seq 1 100); do
      ss -ltn 2>/dev/null | grep -q ":$port " && break
      sleep 0.05
    done
    t0=$(ns_now)
    timeout 900 "$qpc" -d "$QPC_DEV1" -p "$port" --qps "$n" --no-verify --json --timeout 300 "$QPC_IP0" \
      >/tmp/bench_client.json 2>/tmp/bench_client.err
    crc=$?
    t1=$(ns_now)
    wait "$spid"
    src=$?
    if [[ $crc != 0 || $src != 0 ]]; then
      echo "RESULT kind=ours n=$n failed client_exit=$crc server_exit=$src"
      tail -c 2000 /tmp/bench_client.json /tmp/bench_client.err /tmp/bench_server.json /tmp/bench_server.err
    else
      python3 - "$n" "$(( t1 - t0 ))" /tmp/bench_client.json /tmp/bench_server.json <<'PY'
import json, sys
n, wall_ns, cpath, spath = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
c, s = json.load(open(cpath)), json.load(open(spath))
t, q = c["timings_ms"], c["per_qp_us"]
print("RESULT kind=ours n=%d wall_s=%.6f inproc_s=%.6f server_inproc_s=%.6f "
      "open_ms=%.1f setup_ms=%.1f create_ms=%.1f init_ms=%.1f exchange_ms=%.1f validate_ms=%.1f "
      "rtr_ms=%.1f rts_ms=%.1f barrier_ms=%.1f create_p50_us=%.1f create_p99_us=%.1f "
      "rtr_p50_us=%.1f rtr_p99_us=%.1f rss_kib=%d server_rss_kib=%d bytes_sent=%d round_trips=%d"
      % (n, wall_ns / 1e9, t["to_barrier"] / 1e3, s["timings_ms"]["to_barrier"] / 1e3,
         t["open"], t["setup"], t["create"], t["init"], t["exchange"], t["validate"],
         t["rtr"], t["rts"], t["barrier"], q["create"]["p50"], q["create"]["p99"],
         q["rtr"]["p50"], q["rtr"]["p99"], c["max_rss_kib"], s["max_rss_kib"],
         c["exchange"]["description_bytes_sent"], c["exchange"]["round_trips"]))
PY
    fi
    echo "RESULT kind=left after=ours n=$n rc_qps=$(rc_left)"

    # rdma_cm: stock cmtime. Its server does not exit when the client is
    # done: it is stopped once the client exited.
    cmtime -b "$QPC_IP0" -c "$n" >/tmp/bench_cm_server.out 2>&1 &
    spid=$!
    sleep 0.5
    t0=$(ns_now)
    timeout 900 cmtime -s "$QPC_IP0" -b "$QPC_IP1" -c "$n" >/tmp/bench_cm_client.out 2>&1
    crc=$?
    t1=$(ns_now)
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    echo "RESULT kind=rdma_cm n=$n wall_s=$(awk -v d=$(( t1 - t0 )) 'BEGIN {printf "%.6f", d / 1e9}') client_exit=$crc"
    sed "s/^/# cmtime -c $n client: /" /tmp/bench_cm_client.out
    echo "RESULT kind=left after=rdma_cm n=$n rc_qps=$(rc_left)"

    # Pool mode: Connector::Recycle (RTS -> RESET -> INIT) and a new Connect
    # against cold Open + Connect + destroy, median of a few rounds.
    rounds=5; [[ $n -ge 10000 ]] && rounds=2
    line=$("$build/tools/bench/pool_bench" "$n" "$rounds" 2>&1 | tail -1; exit "${PIPESTATUS[0]}")
    prc=$?
    if [[ $prc == 0 ]]; then echo "RESULT kind=${line}"
    else echo "RESULT kind=pool n=$n failed exit=$prc"; echo "# pool_bench: $line"; fi
    echo "RESULT kind=left after=pool n=$n rc_qps=$(rc_left)"
  done
  exit 0
fi

mem=1024
out=""
from=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --mem) mem=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;  # table and plot from a kept connect.raw, no lab run
    *) break ;;
  esac
done
build=$(cd "${1:?usage: connect.sh [--mem MiB] [--out DIR] BUILD_DIR [N...]}" && pwd)
shift
ns=("$@")
[[ ${#ns[@]} -eq 0 ]] && ns=(1 10 100 1000 10000)
out=${out:-$build/bench-connect}
mkdir -p "$out" "$build/tools/bench"
raw=$out/connect.raw
if [[ -n $from ]]; then
  [[ $from -ef $raw ]] || cp "$from" "$raw"
else
  cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -o "$build/tools/bench/connect_bound" \
    "$here/connect_bound.c" -libverbs || exit 1
  "$root/tools/lab/lab-run" --timeout 3600 --mem "$mem" -- "$here/connect.sh" --inside "$build" \
    "${ns[@]}" | tee "$raw"
  status=${PIPESTATUS[0]}
  [[ $status != 0 ]] && { echo "connect.sh: lab-run exited $status" >&2; exit "$status"; }
fi

# The table: pairs/s of each, and the ratios.
python3 - "$raw" "$out/connect.dat" <<'PY'
import re, sys
rows = {}
left = []
failed = []  # runs left out: a failed run's time is not a connect's
for line in open(sys.argv[1]):
    if not line.startswith("RESULT "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    n = int(f["n"])
    r = rows.setdefault(n, {})
    if f["kind"] in ("bound", "ours", "pool") and "failed" in line.split() or \
            f["kind"] == "rdma_cm" and f.get("client_exit") != "0":
        failed.append(line.strip())
    elif f["kind"] == "bound":
        r["bound"] = float(f["total_s"])
    elif f["kind"] == "ours" and "wall_s" in f:
        r["ours_in"] = float(f["inproc_s"]); r["ours_wall"] = float(f["wall_s"])
        r["rss"] = int(f["rss_kib"])
    elif f["kind"] == "rdma_cm" and f.get("client_exit") == "0":
        r["cm"] = float(f["wall_s"])
    elif f["kind"] == "pool" and "pooled_s" in f:
        r["cold"] = float(f["cold_s"]); r["pooled"] = float(f["pooled_s"])
    elif f["kind"] == "left" and f["rc_qps"] != "0":
        left.append(line.strip())
def ps(n, t):
    return n / t if t else float("nan")
print()
print("| N pairs | bound s | ours in-process s | ours process wall s | rdma_cm wall s | "
      "ours in-process / bound (pairs/s) | ours wall / rdma_cm (pairs/s) | client RSS MiB |")
print("|---|---|---|---|---|---|---|---|")
with open(sys.argv[2], "w") as dat:
    dat.write("# N bound_pairs_s ours_inproc_pairs_s ours_wall_pairs_s rdma_cm_pairs_s\n")
    for n in sorted(rows):
        r = rows[n]
        b, oi, ow, cm = (r.get(k) for k in ("bound", "ours_in", "ours_wall", "cm"))
        fmt = lambda x: "%.3f" % x if x else "-"
        ratio = lambda a, c: "%.2f" % (ps(n, a) / ps(n, c)) if a and c else "-"
        print("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
            n, fmt(b), fmt(oi), fmt(ow), fmt(cm), ratio(oi, b), ratio(ow, cm),
            "%.1f" % (r["rss"] / 1024) if "rss" in r else "-"))
        dat.write("%d %s %s %s %s\n" % (n, *("%.3f" % ps(n, x) if x else "NaN" for x in (b, oi, ow, cm))))
rss = {n: r["rss"] for n, r in rows.items() if "rss" in r}
if len(rss) >= 2:
    lo, hi = min(rss), max(rss)
    print("\nclient resident memory per QP (peak RSS at N=%d minus at N=%d, over %d QPs): %.2f KiB"
          % (hi, lo, hi - lo, (rss[hi] - rss[lo]) / (hi - lo)))
pool = [(n, r["cold"], r["pooled"]) for n, r in sorted(rows.items()) if "pooled" in r]
if pool:
    print("\n| N pairs | cold Open + Connect + destroy s | pooled Recycle + Connect s | pooled / cold (reconnects/s) |")
    print("|---|---|---|---|")
    for n, c, p in pool:
        print("| %d | %.3f | %.3f | %.2f |" % (n, c, p, c / p))
print("QPs left after a run: " + ("none" if not left else "; ".join(left)))
print("failed runs (left out): %d" % len(failed) + "".join("\n  " + l for l in failed))
PY

if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output "$out/connect.png"
set logscale xy
set xlabel "N (RC QP pairs)"
set ylabel "pairs connected per second"
set key top left
set grid
set title "Connecting N RC QP pairs, Soft-RoCE lab (TCG, one boot)"
plot "$out/connect.dat" using 1:2 with linespoints title "verbs bound (one thread, no exchange)", \
     "" using 1:3 with linespoints title "qp-connect, in-process to barrier", \
     "" using 1:4 with linespoints title "qp-connect, process wall", \
     "" using 1:5 with linespoints title "rdma_cm (cmtime), process wall"
GP
  echo "plot: $out/connect.png"
else
  echo "connect.sh: gnuplot not installed; no plot (apt-get install gnuplot-nox)" >&2
fi
