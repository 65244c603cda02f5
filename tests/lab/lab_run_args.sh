#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lab_run_args.sh LABDIR: unit test of lab-run's and lab-test's argument
# handling and status mapping. Boots nothing and downloads nothing: every
# case stops before the image build (bad usage), or at the qemu check, with
# QPCONNECT_LAB_QEMU pointing at a missing binary and --vm forced.
set -uo pipefail

lab=${1:?usage: lab_run_args.sh LABDIR}
failures=0
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
export QPCONNECT_LAB_CACHE=$scratch/cache
unset QPCONNECT_LAB_REQUIRED CI

# expect STATUS DESCRIPTION CMD...: runs CMD, checks its exit status.
expect() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" >"$scratch/out" 2>"$scratch/err" || rc=$?
  if [[ $rc -eq $want ]]; then
    echo "ok: $what (exit $rc)"
  else
    echo "FAIL: $what: exit $rc, want $want"
    sed 's/^/  stdout: /' "$scratch/out"; sed 's/^/  stderr: /' "$scratch/err"
    failures=$((failures + 1))
  fi
}
# contains FILE TEXT DESCRIPTION
contains() {
  if grep -qF -- "$2" "$scratch/$1"; then echo "ok: $3"; else
    echo "FAIL: $3: '$2' not in $1"; failures=$((failures + 1)); fi
}

expect 0 "lab-run --help" "$lab/lab-run" --help
contains out "Usage: lab-run" "--help prints usage on stdout"
expect 0 "lab-run -h" "$lab/lab-run" -h
expect 2 "unknown option" "$lab/lab-run" --bogus -- true
contains err "unknown option '--bogus'" "unknown option is named"
expect 2 "no command" "$lab/lab-run"
expect 2 "only --" "$lab/lab-run" --
expect 2 "--timeout without value" "$lab/lab-run" --timeout
expect 2 "--timeout not a number" "$lab/lab-run" --timeout soon -- true
expect 2 "--timeout zero" "$lab/lab-run" --timeout=0 -- true
expect 2 "--mem not a number" "$lab/lab-run" --mem big -- true

nq=$scratch/no-such-qemu
expect 125 "missing qemu is a harness failure" env QPCONNECT_LAB_QEMU="$nq" "$lab/lab-run" --vm -- true
contains err "$nq not installed" "missing qemu is named"
if [[ ! -e $scratch/cache ]]; then echo "ok: nothing cached before the qemu check"; else
  echo "FAIL: cache dir created before the qemu check"; failures=$((failures + 1)); fi

expect 0 "lab-test --help" "$lab/lab-test" --help
expect 2 "lab-test without command" "$lab/lab-test"
expect 2 "lab-test passes usage errors through" "$lab/lab-test" --bogus -- true
expect 77 "lab-test: harness failure is a skip" env QPCONNECT_LAB_QEMU="$nq" "$lab/lab-test" --vm -- true
contains out "SKIP: lab unavailable: $nq not installed" "skip names the reason"
expect 125 "lab-test: QPCONNECT_LAB_REQUIRED=1 keeps 125" \
  env QPCONNECT_LAB_REQUIRED=1 QPCONNECT_LAB_QEMU="$nq" "$lab/lab-test" --vm -- true
contains out "FAIL: lab unavailable" "a required lab's absence is a failure, named"
expect 125 "lab-test: CI=true keeps 125" env CI=true QPCONNECT_LAB_QEMU="$nq" "$lab/lab-test" --vm -- true
expect 77 "lab-test: CI=false is a skip" env CI=false QPCONNECT_LAB_QEMU="$nq" "$lab/lab-test" --vm -- true

# skip_or_fail (skip_or_fail.sh), the scripts' one skip policy: 77 and
# "SKIP: reason" by default, 1 and "FAIL: reason" under QPCONNECT_LAB_REQUIRED=1
# or CI=true.
sof() { bash -c 'source "$1/skip_or_fail.sh"; skip_or_fail "no frobnicator"; echo unreachable' _ "$lab"; }
expect 77 "skip_or_fail: a skip by default" sof
contains out "SKIP: no frobnicator" "skip_or_fail names the reason"
expect 1 "skip_or_fail: QPCONNECT_LAB_REQUIRED=1 fails" env QPCONNECT_LAB_REQUIRED=1 bash -c \
  'source "$1/skip_or_fail.sh"; skip_or_fail "no frobnicator"' _ "$lab"
contains out "FAIL: no frobnicator" "skip_or_fail names the reason of a failure"
expect 1 "skip_or_fail: CI=true fails" env CI=true bash -c \
  'source "$1/skip_or_fail.sh"; skip_or_fail "no frobnicator"' _ "$lab"
expect 77 "skip_or_fail: QPCONNECT_LAB_REQUIRED=0 is a skip" env QPCONNECT_LAB_REQUIRED=0 bash -c \
  'source "$1/skip_or_fail.sh"; skip_or_fail "no frobnicator"' _ "$lab"

if [[ $failures -ne 0 ]]; then echo "$failures check(s) failed"; exit 1; fi
echo "PASS"
