#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 29, item 6: stock cmtime natively (the kernel CM) and through libqpcm
# (qp-cm), the same command lines and N, in ONE lab boot, on rxe's own
# addresses (server bound to rxe0's, client to rxe1's).
#
# Usage: tools/bench/cmtime.sh [--rounds R] [--mem MiB] [--out DIR] [--from RAW] BUILD_DIR [N...]
#   default N: 1 10 100 1000 10000; R rounds per N and kind (default 3; 1
#   for N >= 10000), alternating native and library; guest memory default
#   1024 MiB.
# Keeps every raw line in DIR/cmtime.raw (default BUILD_DIR/bench-cmtime) and
# prints the table: per N and kind the median over the good rounds of the
# client's process wall and of cmtime's own "connect" step (all N connects
# issued until all ESTABLISHED), and the ratios of the connect rates
# (connections per second of the connect step, and of the whole run). A run
# whose client exits non-zero, prints no step table, or prints an error line
# (cmtime exits 0 when some connections failed) is dropped and counted
# (column "failed"). After every run the guest must have no RC QP left.
# Each round also runs the verbs bound (tools/bench/connect_bound.c, plain
# libibverbs, no CM and no exchange): N QP pairs as librdmacm creates them for
# cmtime (two completion channels and two one-entry CQs per QP), rxe0's side
# and rxe1's on two threads: the server's QPs created (the client's were made
# before the clock, as cmtime makes them in a step of its own), then INIT,
# RTR, RTS. No connection manager can do cmtime's connect step faster than
# that on this guest, so "bound rate / native" caps what any library can
# reach against native rdma_cm.
# --from RAW redoes the table from a kept cmtime.raw without a lab run.
# Draws DIR/cmtime.png (the connect step's rate per N, with gnuplot if it is
# installed) from DIR/cmtime.dat.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [[ ${1:-} == --inside ]]; then
  shift
  build=$1 rounds=$2
  shift 2
  qpcm=$build/tools/qp-cm/qp-cm
  bound=$build/tools/bench/connect_bound
  rc_left() { rdma resource show qp 2>/dev/null | grep -c ' type RC ' || true; }
  echo "# kernel $(uname -r), $(nproc) vCPU(s), $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
  port=7471
  run() {  # run KIND N ROUND
    local kind=$1 n=$2 r=$3 wrap=() spid t0 t1 crc
    [[ $kind == qpcm ]] && wrap=("$qpcm" --)
    port=$((port + 1))
    "${wrap[@]}" cmtime -b "$QPC_IP0" -p "$port" >/tmp/cmt_server.out 2>&1 &
    spid=$!
    for _ in $(seq 1 200); do  # until the server listens (natively: no TCP socket, so a fixed wait)
      [[ $kind == qpcm ]] && ss -ltn 2>/dev/null | grep -q ":$port " && break
      [[ $kind == native ]] && { sleep 0.5; break; }
      sleep 0.05
    done
    t0=${EPOCHREALTIME/./}
    timeout 1200 "${wrap[@]}" cmtime -s "$QPC_IP0" -b "$QPC_IP1" -p "$port" -c "$n" \
      >/tmp/cmt_client.out 2>&1
    crc=$?
    t1=${EPOCHREALTIME/./}
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    local connect
    connect=$(awk -F: '/^connect / {split($2, f, " "); print f[1]}' /tmp/cmt_client.out)
    # cmtime exits 0 even when some connections failed: an error event it
    # printed ("event: ..., error: N"), or a line of the library's log (it
    # logs only what went wrong), marks the run failed.
    local errors
    errors=$(grep -ciE 'error|^qpcm\[' /tmp/cmt_client.out)
    echo "RESULT kind=$kind n=$n round=$r client_exit=$crc wall_us=$((t1 - t0)) connect_ms=${connect:-none} error_lines=$errors"
    sed "s/^/# $kind -c $n round $r: /" /tmp/cmt_client.out
    [[ $crc != 0 ]] && sed "s/^/# $kind server: /" /tmp/cmt_server.out | tail -5
    echo "RESULT kind=left after=$kind n=$n rc_qps=$(rc_left)"
  }
  run_bound() {  # run_bound N ROUND (2 x N QPs, 4 x N completion channels: more fds than the default 1024)
    local line
    # Both sides in one process: 2 x N QPs and 4 x N CQs, each its own
    # mapping of the device's queues; at N = 10,000 that passes the default
    # vm.max_map_count (65,530) and ibv_create_qp fails with ENOMEM.
    sysctl -qw vm.max_map_count=1048576 2>/dev/null
    if line=$(ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; "$bound" "$1" "$QPC_DEV0" "$QPC_GID0" "$QPC_DEV1" "$QPC_GID1" --cm-shape --two-threads 2>&1); then
      echo "RESULT kind=bound round=$2 ${line#bound }"
    else
      echo "RESULT kind=bound n=$1 round=$2 failed"
      echo "$line" | tail -n 5 | sed 's/^/# connect_bound: /'
    fi
    echo "RESULT kind=left after=bound n=$1 rc_qps=$(rc_left)"
  }
  for n in "$@"; do
    rr=$rounds
    [[ $n -ge 10000 && $rr -gt 1 ]] && rr=1
    for r in $(seq 1 "$rr"); do
      run native "$n" "$r"
      run qpcm "$n" "$r"
      run_bound "$n" "$r"
    done
  done
  exit 0
fi

mem=1024 out="" from="" rounds=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --mem) mem=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    -h | --help) sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --rounds)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "cmtime.sh: --rounds needs a positive count" >&2; exit 2; }
      rounds=$2; shift 2 ;;
    -*) echo "cmtime.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ -d ${1:-} ]] || { echo "usage: cmtime.sh [--rounds R] [--mem MiB] [--out DIR] [--from RAW] BUILD_DIR [N...] (see --help)" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
ns=("$@")
[[ ${#ns[@]} -eq 0 ]] && ns=(1 10 100 1000 10000)
out=${out:-$build/bench-cmtime}
mkdir -p "$out"
raw=$out/cmtime.raw
if [[ -n $from ]]; then
  [[ -r $from ]] || { echo "cmtime.sh: --from $from: no such readable file" >&2; exit 2; }
  [[ $from -ef $raw ]] || cp "$from" "$raw"
else
  [[ -x $build/tools/qp-cm/qp-cm ]] || { echo "cmtime.sh: $build/tools/qp-cm/qp-cm is not built" >&2; exit 2; }
  mkdir -p "$build/tools/bench"
  cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -o "$build/tools/bench/connect_bound" \
    "$here/connect_bound.c" -libverbs || exit 1
  "$root/tools/lab/lab-run" --timeout 5400 --mem "$mem" -- "$here/cmtime.sh" --inside "$build" \
    "$rounds" "${ns[@]}" | tee "$raw"
  status=${PIPESTATUS[0]}
  [[ $status != 0 ]] && { echo "cmtime.sh: lab-run exited $status" >&2; exit "$status"; }
fi

python3 - "$raw" "$out/cmtime.dat" <<'PY'
import statistics, sys
runs, failed, left, bound, bound_failed = {}, {}, [], {}, {}
for line in open(sys.argv[1]):
    if not line.startswith("RESULT "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    if f["kind"] == "left":
        if f["rc_qps"] != "0":
            left.append(line.strip())
        continue
    if f["kind"] == "bound":
        if "total_s" in f:
            bound.setdefault(int(f["n"]), []).append(float(f["total_s"]))
        else:
            bound_failed[int(f["n"])] = bound_failed.get(int(f["n"]), 0) + 1
        continue
    key = (int(f["n"]), f["kind"])
    if f["client_exit"] != "0" or f["connect_ms"] == "none" or f.get("error_lines", "0") != "0":
        failed[key] = failed.get(key, 0) + 1
        continue
    runs.setdefault(key, []).append((int(f["wall_us"]) / 1e6, float(f["connect_ms"]) / 1e3))
print()
print("| N | native wall s | qpcm wall s | native connect s | qpcm connect s | "
      "connect rate qpcm / native | whole run qpcm / native | good runs (native, qpcm) | failed | "
      "verbs bound s | bound rate / native | qpcm / bound |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for n in sorted({k[0] for k in list(runs) + list(failed)}):
    nat, ours = runs.get((n, "native"), []), runs.get((n, "qpcm"), [])
    med = lambda xs, i: statistics.median(x[i] for x in xs) if xs else None
    nw, ow, nc, oc = med(nat, 0), med(ours, 0), med(nat, 1), med(ours, 1)
    fmt = lambda x: "%.3f" % x if x is not None else "-"
    ratio = lambda a, b: "%.2f" % (a / b) if a and b else "-"
    nf = failed.get((n, "native"), 0) + failed.get((n, "qpcm"), 0)
    bd = statistics.median(bound[n]) if bound.get(n) else None
    nf += bound_failed.get(n, 0)
    print("| %d | %s | %s | %s | %s | %s | %s | %d, %d | %d | %s | %s | %s |" % (
        n, fmt(nw), fmt(ow), fmt(nc), fmt(oc), ratio(nc, oc), ratio(nw, ow), len(nat), len(ours), nf,
        fmt(bd), ratio(nc, bd), ratio(bd, oc)))
print("\nratios above 1: the library is faster (rates are N / time, so rate ratio = native time / qpcm time)")
print("verbs bound: connect_bound --cm-shape --two-threads, the verbs calls alone (median of the rounds);")
print("'bound rate / native' is the most any connection manager could reach against native on this guest")
print("QPs left after a run: " + ("none" if not left else "; ".join(left)))
# The plot's data: per N the connect step's rate (connections per second,
# medians) natively, through the library and of the verbs bound.
with open(sys.argv[2], "w") as dat:
    dat.write("# N native_per_s qpcm_per_s bound_per_s\n")
    for n in sorted({k[0] for k in runs}):
        nat, ours = runs.get((n, "native"), []), runs.get((n, "qpcm"), [])
        rate = lambda xs: "%.1f" % (n / statistics.median(x[1] for x in xs)) if xs else "NaN"
        bd = "%.1f" % (n / statistics.median(bound[n])) if bound.get(n) else "NaN"
        dat.write("%d %s %s %s\n" % (n, rate(nat), rate(ours), bd))
PY
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output "$out/cmtime.png"
set logscale xy
set xlabel "N (connections, cmtime -c N)"
set ylabel "connections per second (cmtime's connect step)"
set key top left
set grid
set title "rdma_cm's cmtime: native (kernel CM) and through libqpcm, Soft-RoCE lab (TCG, one boot)"
plot "$out/cmtime.dat" using 1:4 with linespoints title "verbs bound (no CM, no exchange)", \
     "" using 1:3 with linespoints title "through libqpcm (qp-cm)", \
     "" using 1:2 with linespoints title "native rdma_cm (kernel CM)"
GP
  echo "plot: $out/cmtime.png"
else
  echo "cmtime.sh: gnuplot not installed; no plot (apt-get install gnuplot-nox)" >&2
fi
