#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lab_run_noboot.sh LABDIR: lab-run's boot watchdog. With a boot limit of one
# second no guest reaches its init in time, so lab-run must kill it, boot once
# more, and then give up with 125 and its own message, well before --timeout,
# without running the command. Needs qemu (and the image); exit 77 without
# (a failure under CI, tools/lab/skip_or_fail.sh).
set -uo pipefail
lab=${1:?usage: lab_run_noboot.sh LABDIR}
source "$lab/skip_or_fail.sh"
command -v "${QPCONNECT_LAB_QEMU:-qemu-system-x86_64}" >/dev/null || skip_or_fail "no qemu"
err=$(mktemp) && trap 'rm -f "$err"' EXIT
marker=$(mktemp -u)
rc=0 t0=$SECONDS
QPCONNECT_LAB_BOOT_TIMEOUT=1 "$lab/lab-run" --vm --timeout 300 -- touch "$marker" 2>"$err" || rc=$?
took=$((SECONDS - t0))
cat "$err"
fail=0
[[ $rc -eq 125 ]] || { echo "FAIL: exit $rc, want 125"; fail=1; }
grep -q "booting once more" "$err" || { echo "FAIL: no retry announced"; fail=1; }
grep -q "the guest did not boot" "$err" || { echo "FAIL: no did-not-boot message"; fail=1; }
[[ ! -e $marker ]] || { echo "FAIL: the command ran"; rm -f "$marker"; fail=1; }
# No hang: the image build (first use) counts too; 300 s is --timeout, which
# the two 1 s boot limits must stop well before.
((took < 300)) || { echo "FAIL: took ${took}s, the whole --timeout"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: gave up after ${took}s with 125"
exit "$fail"
