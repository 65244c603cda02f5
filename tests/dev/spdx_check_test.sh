#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/dev/spdx_check.sh: the repository passes it, and it catches what it
# must: a C++ file and a shebang script without the line, a line past the
# third, while data files and docs need none.
# Usage: spdx_check_test.sh SOURCE_DIR
set -uo pipefail
src=$1
check=$src/tools/dev/spdx_check.sh
fail() { echo "FAIL: $*" >&2; exit 1; }

"$check" "$src" || fail "the repository has source files without the SPDX line (above)"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src" "$t/tests/testdata" "$t/docs" "$t/tools/lab"
printf '// SPDX-License-Identifier: MIT\nint a;\n' >"$t/src/good.cc"
printf '#!/bin/sh\n# SPDX-License-Identifier: MIT\n' >"$t/tools/lab/runner"
printf '{"no": "license"}\n' >"$t/tests/testdata/data.json"
printf '# Doc\n' >"$t/docs/page.md"
"$check" "$t" || fail "a tree whose sources all carry the line was refused"

printf 'int b;\n' >"$t/src/bad.cc"
printf '#!/bin/sh\necho\n' >"$t/tools/lab/bare"
printf '# one\n# two\n# three\n# SPDX-License-Identifier: MIT\n' >"$t/src/CMakeLists.txt"
out=$("$check" "$t" 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "exit $rc with three files lacking the line, expected 1: $out"
for f in src/bad.cc tools/lab/bare src/CMakeLists.txt; do
  grep -q "$f: no 'SPDX-License-Identifier: MIT'" <<<"$out" || fail "$f not named: $out"
done
grep -q "3 source file(s) without" <<<"$out" || fail "count not 3: $out"
grep -q "data.json\|page.md\|good.cc" <<<"$out" && fail "named a file that needs no line or has it: $out"
"$check" "$t" extra 2>/dev/null; [[ $? -eq 2 ]] || fail "two directories: expected exit 2"
echo "spdx_check_test: ok"
