#!/usr/bin/env bash
# Where a cmtime connection's time goes through libqpcm (issue 29): one run of
# stock cmtime -c N through qp-cm in the lab with QPCM_DEBUG, and from the two
# libraries' stamped logs the medians (and 90th percentiles) of each step per
# connection: the server's QP creation to its rdma_accept, the accept itself
# (describe, validate, encode, RTR, RTS), the time between two accepts (the
# server's worker creates and accepts one connection after the other), and
# the client's reply to RTS (decode, plan, validate, RTR, RTS).
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
import re
def load(p):
    out = []
    for l in open(p):
        m = re.search(r'\+(\d+) us (.*?) id (\d+)', l)
        if m: out.append((int(m.group(1)), m.group(2), m.group(3)))
    return out
def by(evs, key): return {i: t for t, k, i in evs if k.startswith(key)}
def dist(name, d):
    d = sorted(d)
    if d: print("%-44s median %6d us   p90 %6d us   (%d)" % (name, d[len(d)//2], d[int(len(d)*.9)], len(d)))
s, c = load('/tmp/steps_srv.log'), load('/tmp/steps_cli.log')
q, a, r = by(s, 'qp created'), by(s, 'rdma_accept'), by(s, 'described')
dist('server: QP created -> rdma_accept', [a[i] - q[i] for i in q if i in a])
dist('server: rdma_accept -> REP queued', [r[i] - a[i] for i in a if i in r])
acc = sorted(a.values())
dist('server: between two accepts', [y - x for x, y in zip(acc, acc[1:])])
rep, val = by(c, 'REP for'), by(c, 'validated')
dist('client: REP received -> RTS, RTU queued', [val[i] - rep[i] for i in rep if i in val])
PY
  exit 0
fi
build=$(cd "${1:?usage: cmtime_steps.sh BUILD_DIR [N]}" && pwd)
exec "$here/../lab/lab-run" --timeout 1200 --mem 1024 -- "$here/cmtime_steps.sh" --inside "$build" "${2:-1000}"
