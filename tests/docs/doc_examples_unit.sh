#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that every command example in README.md and docs/*.md is classified
# (<!-- example: run | run-output | pair | not-run: WHY -->, see the header of
# doc_examples.py), and that the checker and the runner can fail: the
# fixture unclassified.md must be rejected with each of its findings,
# failing.md's examples must fail to run, good.md's must run (no device:
# --no-lab, plain shell commands). The examples themselves run in the lab
# (lab_readme_examples, lab_docs_examples).
#
# Usage: doc_examples_unit.sh SOURCE_DIR
set -uo pipefail

src=${1:?usage: doc_examples_unit.sh SOURCE_DIR}
cd "$src" || exit 1
here=tests/docs
ex="python3 $here/doc_examples.py"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
unset QPC_DEV0 QPC_DEV1 QPC_IP0 QPC_IP1 QPC_GID0 QPC_GID1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 1. The real docs: every command block classified, every not-run with a reason.
$ex check README.md docs/*.md >"$out" 2>&1 || { cat "$out"; bad "README.md and docs/*.md have unclassified examples"; }

# 2. The fixture that must be rejected, with each finding.
$ex check "$here/fixtures/unclassified.md" >"$out" 2>&1
rc=$?
[[ $rc -eq 1 ]] || bad "check unclassified.md exited $rc, want 1"
f=$here/fixtures/unclassified.md
for want in \
  "$f:8: a command block with no" "$f:14: a command block with no" \
  "$f:21: a command block with no" "$f:26: not-run without a reason" \
  "$f:31: not-run without a reason" "$f:36: unknown example kind 'sometimes'" \
  "$f:41: a pair block line without hostA\$ or hostB\$" "$f:46: marked run but holds no command" \
  "$f:50: an example marker with no fenced block"; do
  grep -qF -- "FAIL: $want" "$out" || bad "check unclassified.md: no finding '$want'"
done
n=$(grep -c '^FAIL: ' "$out")
[[ $n -eq 9 ]] || { cat "$out"; bad "check unclassified.md: $n findings, want 9 (output lines, JSON and C++ blocks need no marker)"; }

# 3. Every kind, run (no device).
$ex run --no-lab --src . --build build "$here/fixtures/good.md" >"$out" 2>&1 ||
  { cat "$out"; bad "run good.md failed"; }
grep -q "13 command(s) run, 0 failed; 2 block(s) not run" "$out" || { cat "$out"; bad "run good.md: not 13 commands run"; }

# 4. Examples that do not run as written fail: a status, an output, a server.
$ex run --no-lab --src . --build build "$here/fixtures/failing.md" >"$out" 2>&1
rc=$?
[[ $rc -eq 1 ]] || bad "run failing.md exited $rc, want 1"
n=$(grep -c '^FAIL: ' "$out")
[[ $n -eq 3 ]] || { cat "$out"; bad "run failing.md: $n failures, want 3"; }

[[ $fail -eq 0 ]] && echo "docs examples: all classified; the checker and the runner fail what they must"
exit $fail
