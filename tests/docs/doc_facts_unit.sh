#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 40: what README.md and docs/*.md name exists in the code (flags,
# environment variables, exit statuses, repository paths, heading links, C
# API signatures) and no link leads outside the repository
# (tests/docs/doc_facts.py), read from the tree at test time.
# The checker can fail: fixtures/facts_bad.md must be rejected with one
# finding of each kind, fixtures/facts_good.md (one right name of each kind)
# accepted.
#
# Usage: doc_facts_unit.sh SOURCE_DIR
set -uo pipefail

src=${1:?usage: doc_facts_unit.sh SOURCE_DIR}
cd "$src" || exit 1
here=tests/docs
facts="python3 $here/doc_facts.py ."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 1. The real docs.
$facts README.md docs/*.md >"$out" 2>&1 || { cat "$out"; bad "README.md and docs/*.md name what the code does not have"; }

# 2. One wrong name of each kind, each found.
f=$here/fixtures/facts_bad.md
$facts "$f" >"$out" 2>&1
rc=$?
[[ $rc -eq 1 ]] || bad "facts_bad.md exited $rc, want 1"
for want in \
  "$f:5: flag --no-such-option" "$f:6: environment variable QPCM_NO_SUCH_VARIABLE" \
  "$f:7: exit status 42" "$f:8: \`tools/no-such-script.sh\` does not exist" \
  "$f:9: heading link (good.md#no-such-heading)" "$f:10: qpc_connector_open() takes 3 parameter(s)" \
  "$f:11: qpc_exchanger_barrier() takes 4 parameter(s)" "$f:12: qpc_no_such_function() is not declared" \
  "$f:13: qpc_exchanger_barrier declared as" "$f:14: link (../../../../shared/lab.md) leads outside" \
  "$f:14: \`../shared/docs/lab.md\` is outside" "$f:14: \`/work/shared/x.md\` is outside"; do
  grep -qF -- "FAIL: $want" "$out" || { cat "$out"; bad "facts_bad.md: no finding '$want'"; }
done
n=$(grep -c '^FAIL: ' "$out")
[[ $n -eq 13 ]] || { cat "$out"; bad "facts_bad.md: $n findings, want 13 (line 14 also fails doc_paths)"; }

# 3. One right name of each kind, none found wrong.
$facts "$here/fixtures/facts_good.md" >"$out" 2>&1 || { cat "$out"; bad "facts_good.md rejected"; }

[[ $fail -eq 0 ]] && echo "docs facts: every name the docs give exists; the checker fails each kind of wrong one"
exit $fail
