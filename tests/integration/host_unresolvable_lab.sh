#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A HOST with no address is a usage error, exit 2, found before the device is
# opened (issue 14): no -v "opening" step, the message names HOST.
#
# Usage: host_unresolvable_lab.sh QP_CONNECT
set -uo pipefail
: "${QPC_DEV1:?not in the lab: QPC_DEV1 unset}"
out=$("$1" -v -d "$QPC_DEV1" --timeout 5 no-such-host.invalid 2>&1)
rc=$?
echo "$out"
fail=0
[[ $rc -eq 2 ]] || { echo "FAIL: exit $rc, want 2"; fail=1; }
grep -q "HOST 'no-such-host.invalid' has no address" <<<"$out" || { echo "FAIL: HOST not named"; fail=1; }
if grep -q "opening" <<<"$out"; then echo "FAIL: the device was opened first"; fail=1; fi
exit $fail
