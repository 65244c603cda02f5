#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where a cmtime connection's time goes through libqpcm (issue 29): one run of
# stock cmtime -c N through qp-cm in the lab with QPCM_DEBUG, and from the two
# libraries' stamped logs, per pair of consecutive steps of an id, the median
# and 90th percentile over the ids: on the server the request taken, its QP
# created, the accept's describe, validate, encode, RTR and RTS; on the
# client the connect's describe, encode and link, the reply to RTS; and the
# time between two accepts (cmtime's server creates and accepts one
# connection after the other).
#
# Usage: tools/bench/cmtime_steps.sh BUILD_DIR [N]   (default N 1000)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ ${1:-} == --inside ]]; then
  build=$2 n=$3
  export QPCM_DEBUG=1
  QPCM_LOG=/tmp/steps_srv.log "$build/tools/qp-cm/qp-cm" -- cmtime -b "$QPC_IP0" -p 7600 >/dev/null 2>&1 &
  s=$!
  sleep 2
  QPCM_LOG=/tmp/steps_cli.log "$build/tools/qp-cm/qp-cm" -- cmtime -s "$QPC_IP0" -b "$QPC_IP1" -p 7600 -c "$n" 2>&1 |
    grep -E '^(step|create qp|connect) '
  kill "$s" 2>/dev/null
  python3 - <<'PY'
import re, collections
# Every QPCM_DEBUG stamp "+T us STEP id N" (T: CLOCK_MONOTONIC, the same in
# both programs); per id its steps in time order, and per pair of
# consecutive steps the median and 90th percentile over the ids.
def report(path, who):
    per = collections.defaultdict(list)
    for l in open(path):
        m = re.search(r'\+(\d+) us (.*?) id (\d+)$', l.strip())
        if m and m.group(3) != '0':
            per[m.group(3)].append((int(m.group(1)), m.group(2)))
    trans = collections.defaultdict(list)
    for evs in per.values():
        evs.sort()
        for (t0, a), (t1, b) in zip(evs, evs[1:]):
            trans[(a, b)].append(t1 - t0)
    print("%s: %d ids" % (who, len(per)))
    for (a, b), d in sorted(trans.items(), key=lambda kv: -len(kv[1])):
        if len(d) < len(per) // 2 or 'DISCONNECTED' in b:
            continue
        d.sort()
        print("  %-36s -> %-36s median %7d us  p90 %7d us" % (a[:36], b[:36], d[len(d) // 2], d[int(len(d) * .9)]))
    return per
s = report('/tmp/steps_srv.log', 'server')
acc = sorted(t for evs in s.values() for t, k in evs if k == 'rdma_accept')
gaps = sorted(y - x for x, y in zip(acc, acc[1:]))
if gaps:
    print("server: between two rdma_accept calls: median %d us  p90 %d us (%d)" % (gaps[len(gaps) // 2], gaps[int(len(gaps) * .9)], len(gaps)))
report('/tmp/steps_cli.log', 'client')
PY
  exit 0
fi
build=$(cd "${1:?usage: cmtime_steps.sh BUILD_DIR [N]}" && pwd)
exec "$here/../lab/lab-run" --timeout 1200 --mem 1024 -- "$here/cmtime_steps.sh" --inside "$build" "${2:-1000}"
