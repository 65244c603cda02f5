#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where one RC pair's time goes, the client and its server on one clock
# (issue 15, docs/performance.md), in ONE lab boot.
#
# Usage: tools/bench/timeline.sh [--rounds R] QP_CONNECT   (default 10 rounds)
# On the host it compiles tools/bench/call_timeline.c (an LD_PRELOAD library
# stamping the verbs and socket calls that mark a connection's steps) and
# tools/bench/start_exec.c into a fresh directory under ${TMPDIR:-/tmp}, then
# runs itself inside the lab. Each round: a server (`QP_CONNECT -d DEV0
# --no-verify`), then 0.5 s later, as tools/bench/start.sh, a client
# (`-d DEV1 --no-verify IP0`), both stamped; times in ms from the client's
# fork. Per round one line, then the medians:
#   main        the client's main() (process start: loader, initializers);
#   open        its ibv_open_device() (on the warm-up thread when that opened
#               the device; else options parsed and the device list ready);
#   create      its first ibv_create_qp() (the description gathered);
#   init        its RESET->INIT;
#   sent        its description on the wire (the first send after INIT);
#   srv_rtr     the server's INIT->RTR (it received, decoded and validated);
#   srv_bar     the server's barrier on the wire (the first send after RTS);
#   cli_rtr     the client's INIT->RTR;
#   cli_bar     the client's barrier on the wire;
#   down        the client's teardown begins (the exchange's socket shut);
#   exit        the client's exit handlers.
# `srv_bar - sent` is the server's turn: from the client's description on the
# wire to the server's barrier, the step the client's barrier waits for.
# A round where the client or the server failed is dropped, not timed (a
# client that fails fast would look fast), and counted: failed_rounds=.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

source "$here/bench_args.sh"
bench_args timeline.sh "$@"
if [[ $inside == 0 ]]; then
  [[ ${#bins[@]} -eq 1 ]] || { echo "usage: timeline.sh [--rounds R] QP_CONNECT" >&2; exit 2; }
  bench_in_lab "$0" call_timeline.c
fi
bin=${bins[0]}
stamp=$QPC_BENCH_TOOLS/call_timeline.so
work=$(mktemp -d)
source "$root/tests/integration/lab_qps.sh"  # wait_listening
"$bin" --version >/dev/null
# One pair first: fills the provider cache, as start.sh does.
"$bin" -d "$QPC_DEV0" -p 22999 --no-verify >/dev/null 2>&1 &
sleep 0.5
"$bin" -d "$QPC_DEV1" -p 22999 --no-verify "$QPC_IP0" >/dev/null 2>&1
wait
echo "# kernel $(uname -r), $(nproc) vCPU(s); $rounds rounds; $bin; ms from the client's fork"
for r in $(seq 1 "$rounds"); do
  port=$((23000 + r))
  LD_PRELOAD=$stamp "$bin" -d "$QPC_DEV0" -p "$port" --no-verify >/dev/null 2>"$work/s$r" &
  sp=$!
  sleep 0.5
  wait_listening "$port"
  # A round where either side failed is dropped (marked in $work/failed$r).
  START_STAMP=$stamp "$QPC_BENCH_TOOLS/start_exec" "$bin" -d "$QPC_DEV1" -p "$port" \
    --no-verify "$QPC_IP0" >/dev/null 2>"$work/c$r" ||
    { echo "timeline.sh: client failed" >&2; echo client >>"$work/failed$r"; }
  wait "$sp" || { echo "timeline.sh: server failed" >&2; echo server >>"$work/failed$r"; }
done
python3 - "$work" "$rounds" <<'EOF'
import os, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
keys = ["main", "open", "create", "init", "sent", "srv_rtr", "srv_bar", "cli_rtr", "cli_bar",
        "down", "exit"]

def calls(path):
    out = []
    for line in open(path):
        f = line.split(maxsplit=3)
        if len(f) == 4 and f[0] == "CALL":
            out.append((float(f[1]), f[2], f[3].strip()))
    return out

def first(events, what, after=None, thread="main"):
    for ms, t, w in events:
        if w == what and thread in (None, t) and (after is None or ms > after):
            return ms
    return None

def first_send(events, after):
    if after is None:
        return None
    for ms, t, w in events:
        if t == "main" and w in ("send", "sendto") and ms > after:
            return ms
    return None

rows = []
failed = 0
for r in range(1, rounds + 1):
    if os.path.exists(f"{work}/failed{r}"):  # its times are not a pair's: dropped
        failed += 1
        print(f"round {r}: failed ({' and '.join(open(f'{work}/failed{r}').read().split())}): dropped")
        continue
    c, s = calls(f"{work}/c{r}"), calls(f"{work}/s{r}")
    # The client stamps from its fork (BASE: that time), the server absolutely.
    base = None
    for line in open(f"{work}/c{r}"):
        if line.startswith("BASE"):
            base = float(line.split()[1])
    if base is None or not c or not s:
        print(f"round {r}: no stamps"); continue
    s = [(ms - base, t, w) for ms, t, w in s]
    v = {}
    v["main"] = first(c, "main")
    v["open"] = first(c, "ibv_open_device", thread=None)  # the warm-up's, if it opened it
    v["create"] = first(c, "ibv_create_qp")
    v["init"] = first(c, "modify INIT")
    v["sent"] = first_send(c, v["init"])
    v["srv_rtr"] = first(s, "modify RTR")
    v["cli_rtr"] = first(c, "modify RTR")
    v["srv_bar"] = first_send(s, first(s, "modify RTS"))
    v["cli_bar"] = first_send(c, first(c, "modify RTS"))
    v["down"] = first(c, "shutdown", after=v["cli_bar"])
    v["exit"] = first(c, "exit")
    if any(x is None for x in v.values()):
        print(f"round {r}: incomplete: " + " ".join(k for k in keys if v[k] is None)); continue
    rows.append(v)
    print(f"round {r}: " + " ".join(f"{k}={v[k]:.1f}" for k in keys))
if rows:
    med = {k: statistics.median(v[k] for v in rows) for k in keys}
    print("RESULT medians: " + " ".join(f"{k}={med[k]:.1f}" for k in keys))
    turn = statistics.median(v["srv_bar"] - v["sent"] for v in rows)
    wait = statistics.median(v["down"] - v["cli_bar"] for v in rows)
    print(f"RESULT server_turn_ms={turn:.1f} client_barrier_to_teardown_ms={wait:.1f} rounds={len(rows)}")
print(f"RESULT failed_rounds={failed} (dropped)")
EOF
rm -rf "$work"
