#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# N = 1 and process start (issue 15): how long one qp-connect process takes,
# against stock cmtime, in ONE lab boot, for one or more qp-connect binaries
# (to compare link variants, e.g. a build with -DQPCONNECT_STATIC_TOOL_DEPS=OFF).
#
# Usage: tools/bench/start.sh [--rounds R] QP_CONNECT [QP_CONNECT...]
#   (default 10 rounds)
# Runs itself inside the lab (tools/lab/lab-run). Each round, interleaved:
#   start    `cmtime -h` and `QP_CONNECT --version`: process start and exit;
#   connect  the client's process wall for one RC pair, the server already
#            waiting: `cmtime -c 1` (server bound to rxe0's address, client to
#            rxe1's) and `QP_CONNECT --no-verify` (server on rxe0 from the
#            first binary, client on rxe1 over TCP);
#   cold     the same connect with QPC_PROVIDER_CACHE=off: libibverbs loads
#            every provider library, as it does for cmtime (the default run
#            preloads the device's provider from the provider cache, which
#            one connect before the rounds has filled: docs/performance.md);
#   noaslr   both clients' connect run under `setarch -R` (no address space
#            randomisation; the wrapper adds its own exec to both): under
#            TCG, QEMU 7.2 keys the code it has translated by virtual address,
#            so a randomised program retranslates all the code it runs in
#            every process, at a cost that grows with its code, not its work
#            (docs/performance.md);
# then the median of each, and for each binary the paired figure: the median
# over the rounds of (cmtime's wall / ours) in the same round, which the
# rounds' drift within a boot moves less than a ratio of medians, and in how
# many rounds ours was faster (docs/performance.md). Every binary ran once
# before, so that the guest's page cache (its files come over 9p) holds them. The host's load moves these
# numbers a lot: compare only within one run, and run it on an idle host.
# A run that failed (the client, or ours' server, exited other than expected:
# 0, or 1 for `cmtime -h`) is not timed: a client that fails fast would look
# fast. It is kept as "x" in the `all:` lists, left out of the medians and of
# the paired figures (that round's pair), and counted (failed=, and
# failed_runs= over all).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

source "$here/bench_args.sh"
bench_args start.sh "$@"
if [[ $inside == 0 ]]; then
  exec "$root/tools/lab/lab-run" --timeout 1800 -- "$0" --rounds "$rounds" --inside "${bins[@]}"
fi
set -- "${bins[@]}"
ns() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
# wall CMD...: CMD's wall time in ms, or "x" if it exited other than $want (default 0).
wall() {
  local t0 t1 status
  t0=$(ns); "$@" >/dev/null 2>&1; status=$?; t1=$(ns)
  if [[ $status -ne ${want:-0} ]]; then echo x; else ms "$t0" "$t1"; fi
}
# median, nfailed: of a list of times with "x" for the failed runs.
median() {
  tr ' ' '\n' | grep -E '^[0-9]+$' | sort -n |
    awk '{a[NR]=$1} END {print (NR == 0 ? "none" : NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}
nfailed() { tr ' ' '\n' | grep -c '^x$'; }
# paired CMTIME_LIST OURS_LIST: the rounds are interleaved, so round i of
# each is a pair; "M K/N": the median over the rounds of cmtime's wall over
# ours (its pairs/s over cmtime's), and in how many rounds ours was faster;
# a round where either failed ("x") is left out.
paired() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    rounds = split(a, x, " "); split(b, y, " "); k = 0; n = 0
    for (i = 1; i <= rounds; i++) {
      if (x[i] == "x" || y[i] == "x") continue
      r[++n] = x[i] / y[i]; if (y[i] < x[i]) k++
    }
    if (n == 0) { printf "none 0/0"; exit }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
    m = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
    printf "%.3f %d/%d", m, k, n }'
}
server=$1
declare -A W
for b in "$@"; do "$b" --version >/dev/null; done
cmtime -h >/dev/null 2>&1; ibv_devices >/dev/null
ours() {  # ours BINARY [cold|noaslr]: one client's wall, the server waiting
  local port=$((21000 + RANDOM % 1000)) sp t0 t1 failed=0
  "$server" -d "$QPC_DEV0" -p "$port" --no-verify >/dev/null 2>&1 &
  sp=$!
  # The same head start as cmtime's server gets (0.5 s from its spawn): the
  # port listens before the device is open, so a client sent at once would
  # wait for the server's open too.
  sleep 0.5
  for _ in $(seq 1 100); do ss -ltn | grep -q ":$port " && break; sleep 0.05; done
  local args=(-d "$QPC_DEV1" -p "$port" --no-verify "$QPC_IP0")
  t0=$(ns)
  case ${2:-} in  # no wrapper process for cold: its exec would count
    cold) QPC_PROVIDER_CACHE=off "$1" "${args[@]}" ;;
    noaslr) setarch x86_64 -R "$1" "${args[@]}" ;;
    *) "$1" "${args[@]}" ;;
  esac >/dev/null 2>&1 || { echo "client $1 failed" >&2; failed=1; }
  t1=$(ns); wait "$sp" || { echo "server failed" >&2; failed=1; }
  if [[ $failed == 1 ]]; then echo x; else ms "$t0" "$t1"; fi
}
for b in "$@"; do ours "$b" >/dev/null; done  # fills the provider cache
echo "# kernel $(uname -r), $(nproc) vCPU(s); $rounds rounds; ms"
for _ in $(seq 1 "$rounds"); do
  W[start cmtime]+="$(want=1 wall cmtime -h) "  # its usage, with status 1
  for b in "$@"; do W[start $b]+="$(wall "$b" --version) "; done
  cmtime -b "$QPC_IP0" -c 1 >/dev/null 2>&1 &
  sp=$!; sleep 0.5
  W[connect cmtime]+="$(wall cmtime -s "$QPC_IP0" -b "$QPC_IP1" -c 1) "
  kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
  cmtime -b "$QPC_IP0" -c 1 >/dev/null 2>&1 &
  sp=$!; sleep 0.5
  W[noaslr cmtime]+="$(wall setarch x86_64 -R cmtime -s "$QPC_IP0" -b "$QPC_IP1" -c 1) "
  kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
  for b in "$@"; do W[connect $b]+="$(ours "$b") "; done
  for b in "$@"; do W[cold $b]+="$(ours "$b" cold) "; done
  for b in "$@"; do W[noaslr $b]+="$(ours "$b" noaslr) "; done
done
W[cold cmtime]=${W[connect cmtime]}
failed_runs=0
for kind in start connect cold noaslr; do
  base=$(echo "${W[$kind cmtime]}" | median)
  f=$(echo "${W[$kind cmtime]}" | nfailed)
  [[ $kind == cold ]] || failed_runs=$((failed_runs + f))  # cold's cmtime is connect's
  echo "RESULT $kind cmtime median_ms=$base failed=$f all: ${W[$kind cmtime]}"
  for b in "$@"; do
    m=$(echo "${W[$kind $b]}" | median)
    f=$(echo "${W[$kind $b]}" | nfailed)
    failed_runs=$((failed_runs + f))
    p=$(paired "${W[$kind cmtime]}" "${W[$kind $b]}")  # the guest has no /dev/fd
    pm=${p% *} pk=${p#* }
    echo "RESULT $kind $b median_ms=$m failed=$f vs_cmtime_pairs_per_s=$(awk -v a="$base" -v b="$m" 'BEGIN {if (b + 0 > 0 && a + 0 > 0) printf "%.2f", a / b; else printf "none"}') paired_vs_cmtime=$pm faster_rounds=$pk all: ${W[$kind $b]}"
  done
done
echo "RESULT failed_runs=$failed_runs (dropped)"
echo "RESULT left rc_qps=$(rdma resource show qp 2>/dev/null | grep -c ' type RC ')"
