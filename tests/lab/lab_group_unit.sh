#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lab_group_unit.sh LABDIR: unit test of the lab's groups (several tests in
# one boot, docs/lab.md): lab-cases frames each case and isolates it (a
# status each, a process left behind killed, a hang ended by
# --case-timeout), lab-group --split records each case, lab-case reports
# each on its own (its output, its status; a case without one fails; a
# skipped group skips, or fails under CI). Boots nothing: lab-cases runs
# here, and lab-group meets a missing qemu.
set -uo pipefail

lab=${1:?usage: lab_group_unit.sh LABDIR}
failures=0
w=$(mktemp -d) || exit 1
trap 'rm -rf "$w"' EXIT
export QPCONNECT_LAB_CACHE=$w/cache
unset QPCONNECT_LAB_REQUIRED CI

# expect STATUS DESCRIPTION CMD...: runs CMD (output in $w/out), checks its status.
expect() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" >"$w/out" 2>&1 || rc=$?
  if [[ $rc -eq $want ]]; then echo "ok: $what (exit $rc)"; else
    echo "FAIL: $what: exit $rc, want $want"; sed 's/^/  | /' "$w/out"; failures=$((failures + 1)); fi
}
# contains FILE TEXT DESCRIPTION / lacks FILE TEXT DESCRIPTION
contains() {
  if grep -qF -- "$2" "$1"; then echo "ok: $3"; else
    echo "FAIL: $3: '$2' not in ${1##*/}"; sed 's/^/  | /' "$1"; failures=$((failures + 1)); fi
}
lacks() {
  if ! grep -qF -- "$2" "$1"; then echo "ok: $3"; else
    echo "FAIL: $3: '$2' in ${1##*/}"; failures=$((failures + 1)); fi
}

marker=$w/left-running
# lab-cases, here (it is what runs in the guest).
expect 1 "lab-cases runs every case, exit 1 as one failed" "$lab/lab-cases" --case-timeout 2 \
  passes 1 true \
  fails 3 sh -c 'echo to stdout; echo to stderr >&2; exit 3' \
  leaves 3 sh -c "(sleep 3; touch '$marker') & echo started" \
  hangs 2 sleep 30 \
  no_newline 3 printf '%s' 'no newline at the end' \
  skips 3 sh -c 'echo "SKIP: nothing here"; exit 77' \
  last 2 echo "the last case"
cp "$w/out" "$w/group.log"
contains "$w/group.log" "qpc-case: begin passes" "each case begins with its marker"
contains "$w/group.log" "qpc-case: end hangs 124" "a hung case ends at --case-timeout (124)"
contains "$w/group.log" "qpc-case: end last 0" "the case after a hung one runs"
expect 2 "lab-cases: a COUNT that is not the number of words" "$lab/lab-cases" one 3 true
expect 2 "lab-cases: a bad case name" "$lab/lab-cases" 'a b' 1 true
expect 2 "lab-cases: no case" "$lab/lab-cases"

# lab-group --split and lab-case.
mkdir "$w/r"
expect 0 "lab-group --split" "$lab/lab-group" --split "$w/r" <"$w/group.log"
expect 0 "lab-case: a case that passed" "$lab/lab-case" "$w/r" passes
expect 3 "lab-case: a failed case exits with its status" "$lab/lab-case" "$w/r" fails
contains "$w/out" "to stderr" "a case's record holds its stderr"
contains "$w/out" "to stdout" "a case's record holds its stdout"
lacks "$w/out" "qpc-case:" "a case's record holds no marker"
lacks "$w/out" "the last case" "a case's record holds no other case's output"
expect 0 "lab-case: a case that left a process running" "$lab/lab-case" "$w/r" leaves
sleep 4
if [[ ! -e $marker ]]; then echo "ok: what a case left running was killed at its end"; else
  echo "FAIL: a process a case left running outlived it"; failures=$((failures + 1)); fi
expect 124 "lab-case: a hung case" "$lab/lab-case" "$w/r" hangs
expect 0 "lab-case: output without a final newline" "$lab/lab-case" "$w/r" no_newline
contains "$w/out" "no newline at the end" "its output is kept"
contains "$w/out" "lab-case: no_newline exited 0" "and the marker after it still ends the case"
expect 77 "lab-case: a case that skipped" "$lab/lab-case" "$w/r" skips
expect 1 "lab-case: a case without a status (never ran)" "$lab/lab-case" "$w/r" absent
contains "$w/out" "FAIL: absent has no result" "a case that never ran is named"
printf 'qpc-case: begin cut\nhalf of it\n' >"$w/cut.log"
"$lab/lab-group" --split "$w/r" <"$w/cut.log"
expect 1 "lab-case: a case whose boot ended in its middle" "$lab/lab-case" "$w/r" cut
contains "$w/out" "half of it" "what it printed before is shown"

# lab-group itself, with no qemu: a skip recorded for every case, or a
# failure under CI.
nq=$w/no-such-qemu
expect 77 "lab-group: the lab unavailable is a skip" \
  env QPCONNECT_LAB_QEMU="$nq" "$lab/lab-group" "$w/g" --vm -- "$lab/lab-cases" a 1 true
contains "$w/g/skipped" "SKIP: lab unavailable" "the group records why it skipped"
expect 77 "lab-case: a case of a skipped group skips" "$lab/lab-case" "$w/g" a
expect 1 "lab-case: ... and fails under CI=true" env CI=true "$lab/lab-case" "$w/g" a
expect 125 "lab-group: CI=true keeps the lab's absence a failure" \
  env CI=true QPCONNECT_LAB_QEMU="$nq" "$lab/lab-group" "$w/g" --vm -- "$lab/lab-cases" a 1 true
if [[ ! -e $w/g/skipped ]]; then echo "ok: ... and records no skip"; else
  echo "FAIL: a group that failed under CI recorded a skip"; failures=$((failures + 1)); fi
expect 2 "lab-group: no command" "$lab/lab-group" "$w/g" --vm --
expect 2 "lab-group: no RESULTS_DIR" "$lab/lab-group"

if [[ $failures -ne 0 ]]; then echo "$failures check(s) failed"; exit 1; fi
echo "PASS"
