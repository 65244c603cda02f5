#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where a short run's time goes (issue 15, docs/performance.md): the process
# start of qp-connect and of stock cmtime split into phases, with and without
# address space randomisation, in ONE lab boot.
#
# Usage: tools/bench/start_phases.sh [--rounds R] QP_CONNECT [QP_CONNECT...]
#   (default 10 rounds)
# On the host it compiles tools/bench/start_stamp.c (an LD_PRELOAD library)
# and tools/bench/start_exec.c (a fork/exec wrapper) into a fresh directory
# under ${TMPDIR:-/tmp}, then runs itself inside the lab. Each round,
# interleaved, for cmtime and every QP_CONNECT:
#   start    `cmtime -h` / `QP_CONNECT --version`;
#   connect  one RC pair, the client's process, the server already waiting
#            (as tools/bench/start.sh: `cmtime -c 1`; `QP_CONNECT --no-verify`
#            with the first QP_CONNECT as server, over TCP);
# each once as is and once under `setarch -R` (no randomisation; the wrapper
# runs under setarch, so setarch's own exec is not counted). Per program and
# kind, the medians of (ms):
#   loader  fork, exec and the dynamic loader, to the first initializer;
#   init    the program's static initializers (C++ runtime, Protobuf, ...);
#   main    main() to exit;
#   wall    fork to exit, as start_exec sees it.
# A run that failed (its program, or the pair's server, exited other than
# expected: 0, or 1 for `cmtime -h`) is dropped, not timed: a client that
# fails fast would look fast. Each RESULT line says how many were (failed=).
# Under TCG, QEMU 7.2 keys the code it translates by virtual address: with
# randomisation every process translates all it runs afresh, without it a
# program finds its code translated by the runs before.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

source "$here/bench_args.sh"
bench_args start_phases.sh "$@"
if [[ $inside == 0 ]]; then
  bench_in_lab "$0" start_stamp.c
fi
set -- "${bins[@]}"
export START_STAMP=$QPC_BENCH_TOOLS/start_stamp.so
run=$QPC_BENCH_TOOLS/start_exec
server=$1
raw=$(mktemp)
# measure LABEL CMD...: one run; prints "LABEL loader=.. init=.. main=.. WALL ..",
# or "LABEL FAILED" when CMD exits other than $want (default 0).
measure() {
  local label=$1 line status
  shift
  line=$("$@" 2>&1 >/dev/null | grep -E '^(STAMP|WALL)' | tr '\n' ' '; exit "${PIPESTATUS[0]}")
  status=$?
  if [[ $status -ne ${want:-0} ]]; then echo "$label FAILED"; else echo "$label $line"; fi
}
# both LABEL CMD...: as is, then without randomisation, into $raw.
both() {
  local label=$1
  shift
  measure "$label aslr" "$run" "$@" >>"$raw"
  measure "$label noaslr" setarch "$(uname -m)" -R "$run" "$@" >>"$raw"
}
ours_connect() {  # ours_connect BINARY
  local b=$1 aslr port sp line
  for aslr in aslr noaslr; do
    port=$((23000 + RANDOM % 1000))
    "$server" -d "$QPC_DEV0" -p "$port" --no-verify >/dev/null 2>&1 &
    sp=$!
    sleep 0.5
    for _ in $(seq 1 100); do ss -ltn | grep -q ":$port " && break; sleep 0.05; done
    local cmd=("$run" "$b" -d "$QPC_DEV1" -p "$port" --no-verify "$QPC_IP0")
    if [[ $aslr == aslr ]]; then line=$(measure "connect $b aslr" "${cmd[@]}")
    else line=$(measure "connect $b noaslr" setarch "$(uname -m)" -R "${cmd[@]}"); fi
    if ! wait "$sp"; then
      echo "start_phases.sh: server $server failed" >&2
      line="connect $b $aslr FAILED"
    fi
    echo "$line" >>"$raw"
  done
}
cmtime_connect() {
  local aslr sp
  for aslr in aslr noaslr; do
    cmtime -b "$QPC_IP0" -c 1 >/dev/null 2>&1 &
    sp=$!
    sleep 0.5
    local cmd=("$run" cmtime -s "$QPC_IP0" -b "$QPC_IP1" -c 1)
    if [[ $aslr == aslr ]]; then measure "connect cmtime aslr" "${cmd[@]}" >>"$raw"
    else measure "connect cmtime noaslr" setarch "$(uname -m)" -R "${cmd[@]}" >>"$raw"; fi
    kill "$sp" 2>/dev/null
    wait "$sp" 2>/dev/null
  done
}
for b in "$@"; do "$b" --version >/dev/null; done  # the guest's page cache
ours_connect "$1" >/dev/null                          # and the provider cache
: >"$raw"
echo "# kernel $(uname -r), $(nproc) vCPU(s); $rounds rounds; medians in ms"
for _ in $(seq 1 "$rounds"); do
  want=1 both "start cmtime" cmtime -h  # its usage, with status 1
  for b in "$@"; do both "start $b" "$b" --version; done
  cmtime_connect
  for b in "$@"; do ours_connect "$b"; done
done
python3 - "$raw" <<'PY'
import collections, re, statistics, sys
runs = collections.OrderedDict()
failed = collections.Counter()
for line in open(sys.argv[1]):
    kind, prog, aslr, rest = line.rstrip("\n").split(" ", 3)
    runs.setdefault((kind, prog, aslr), [])
    if rest.strip() == "FAILED":  # dropped: its time is not a start's
        failed[(kind, prog, aslr)] += 1
        continue
    vals = dict((k, float(v)) for k, v in re.findall(r"(loader|init|main|WALL)[= ]([\d.]+)", rest))
    runs[(kind, prog, aslr)].append(vals)
for (kind, prog, aslr), rs in runs.items():
    med = {k: statistics.median(r[k] for r in rs if k in r) for k in ("loader", "init", "main", "WALL")
           if any(k in r for r in rs)}
    print(f"RESULT {kind} {prog} {aslr} n={len(rs)} failed={failed[(kind, prog, aslr)]} " +
          " ".join(f"{k.lower()}={v:.1f}" for k, v in med.items()))
print(f"RESULT failed_runs={sum(failed.values())} (dropped)")
PY
rm -f "$raw"
echo "RESULT left rc_qps=$(rdma resource show qp 2>/dev/null | grep -c ' type RC ')"
