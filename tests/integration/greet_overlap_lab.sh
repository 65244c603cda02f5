#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A tcp client greets the server while its device opens (issue 15, Greeter):
#  1. the device cannot be opened, the server already waiting: the client
#     exits 3 at once, and the server, greeted, is told why (exit 4 quoting
#     "the client could not open its device") long before its --timeout;
#  2. the device cannot be opened and no server listens: exit 3 at once, not
#     after the connect retries run out;
#  3. a good pair (--no-verify): both exit 0, the client's JSON has
#     timings_ms.greet and the exchange still moves exactly three frames each
#     way (hello, description, the rts barrier: greeting early adds none);
# and no QP is left after any case.
#
# Usage: greet_overlap_lab.sh QP_CONNECT
set -uo pipefail
bin=$1
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
ms() { date +%s%3N; }
. "$(dirname "$0")/lab_qps.sh"
# "At once" below is 10 s for a client and 12 s for the server it told: both
# sides have --timeout 20, which a side that was not told (or a client that
# retried its connect) would wait out. Not a speed claim: the guest is
# emulated and its host may be loaded.

echo "--- 1: no such device, the server waiting"
"$bin" -d "$QPC_DEV0" -p 21701 --timeout 20 --no-verify >"$work/s1" 2>&1 &
sp=$!
wait_listening 21701
t0=$(ms)
"$bin" -d no-such-device -p 21701 --timeout 20 --no-verify "$QPC_IP0" >"$work/c1" 2>&1
crc=$?
t1=$(ms)
wait "$sp"
src=$?
t2=$(ms)
cat "$work/c1" "$work/s1"
[[ $crc -eq 3 ]] || { echo "FAIL (1): client exit $crc, want 3"; fail=1; }
[[ $src -eq 4 ]] || { echo "FAIL (1): server exit $src, want 4"; fail=1; }
grep -q "the peer aborted: the client could not open its device" "$work/s1" ||
  { echo "FAIL (1): the server was not told why"; fail=1; }
(( t1 - t0 < 10000 )) || { echo "FAIL (1): the client took $((t1 - t0)) ms"; fail=1; }
(( t2 - t0 < 12000 )) || { echo "FAIL (1): the server took $((t2 - t0)) ms (its --timeout is 20 s)"; fail=1; }
check_no_qps 1

echo "--- 2: no such device, no server"
t0=$(ms)
"$bin" -d no-such-device -p 21702 --timeout 20 --no-verify "$QPC_IP0" >"$work/c2" 2>&1
crc=$?
t1=$(ms)
cat "$work/c2"
[[ $crc -eq 3 ]] || { echo "FAIL (2): client exit $crc, want 3"; fail=1; }
(( t1 - t0 < 10000 )) || { echo "FAIL (2): the client took $((t1 - t0)) ms (connect retries?)"; fail=1; }
check_no_qps 2

echo "--- 3: a good pair"
"$bin" -d "$QPC_DEV0" -p 21703 --timeout 20 --no-verify >"$work/s3" 2>&1 &
sp=$!
sleep 0.5
"$bin" -d "$QPC_DEV1" -p 21703 --timeout 20 --no-verify --json "$QPC_IP0" >"$work/c3.json" 2>"$work/c3.err"
crc=$?
wait "$sp"
src=$?
cat "$work/c3.err" "$work/s3"
[[ $crc -eq 0 && $src -eq 0 ]] || { echo "FAIL (3): client $crc, server $src"; fail=1; }
python3 - "$work/c3.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
t = d["timings_ms"]
ok = True
if "greet" not in t or not t["greet"] > 0:
    print("FAIL (3): no timings_ms.greet:", t); ok = False
ex = d.get("exchange", {})
print("greet", t.get("greet"), "open", t.get("open"), "exchange", t.get("exchange"), "frames", {k: v for k, v in ex.items() if "frames" in k})
if ex.get("frames_sent") != 3 or ex.get("frames_received") != 3:
    print("FAIL (3): frames", ex); ok = False
sys.exit(0 if ok else 1)
PY
check_no_qps 3
[[ $fail -eq 0 ]] && echo "greet overlap: all cases passed"
exit $fail
