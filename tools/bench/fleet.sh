#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark (issue 32): a whole job's snapshots paired and judged by
# qp-validate on one core, and the verdict checked against the planted truth.
#
#   tools/bench/fleet.sh BUILD_DIR [HOSTS [QPS [--no-dest]]]
#       (default 1000 hosts x 1000 QPs: about a million QPs)
#
# 1. fleet_gen writes HOSTS snapshots (QP numbers repeating on every host, a
#    stopped and a killed process, a PSN-skewed pair, a QP in ERR) and
#    truth.json; --no-dest leaves out the QPs' destination addresses (what
#    rxe's resource tracker shows).
# 2. qp-validate on all of them under `taskset -c 0` and /usr/bin/time -v,
#    text output (the summary and the unsound pairs): wall time, CPU time,
#    peak RSS, and qp-validate's own split by stage (its closing progress
#    line: read, pair and judge, sum up, print; wall and CPU); the goal is
#    under 10 s and 2 GiB.
# 3. qp-validate --json on them again, timed the same way (the goal holds
#    for it too), and fleet_check.py: pairs with the wrong peer, healthy
#    pairs accused, every planted fault found.
# The machine's load is printed first: time figures are worth what the load
# lets them be. Record the output in docs/inspect.md ("Scale").
set -euo pipefail
build=${1:?usage: fleet.sh BUILD_DIR [HOSTS [QPS [--no-dest]]]}
hosts=${2:-1000}
qps=${3:-1000}
dest_opt=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
gen=$build/tools/bench/fleet_gen
qv=$build/tools/qp-validate/qp-validate
w=$(mktemp -d "${TMPDIR:-/tmp}/fleet.XXXXXX")
trap 'rm -rf "$w"' EXIT

echo "fleet: $(uptime)"
echo "fleet: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$gen" --hosts "$hosts" --qps "$qps" --out "$w/job" $dest_opt
echo "fleet: snapshots $(du -sh "$w/job" | cut -f1) in $(ls "$w/job" | grep -c '^node-') files"
cat "$w"/job/node-*.json > /dev/null  # in the page cache, as a second read would be

# timed OUTPUT [qp-validate options]: one run on one core, its figures printed.
timed() {
  local out=$1 status=0
  shift
  /usr/bin/time -v taskset -c 0 "$qv" "$@" "$w"/job/node-*.json > "$out" 2> "$w/time.txt" ||
    status=$?
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$w/time.txt")
  user=$(sed -n 's/.*User time (seconds): //p' "$w/time.txt")
  sys=$(sed -n 's/.*System time (seconds): //p' "$w/time.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$w/time.txt")
  echo "fleet: qp-validate ${*:-(text)} on one core: exit $status, wall $wall, user $user s," \
    "sys $sys s, peak RSS $((rss / 1024)) MiB, $(du -h "$out" | cut -f1)"
  grep '^qp-validate: done in' "$w/time.txt" | sed 's/^/  | /' || true
}

timed "$w/verdict.txt"
echo "fleet: its summary:"
sed -n '1,/^$/p' "$w/verdict.txt" | sed 's/^/  | /'
timed "$w/verdict.json" --json
python3 "$here/fleet_check.py" "$w/job/truth.json" "$w/verdict.json"
