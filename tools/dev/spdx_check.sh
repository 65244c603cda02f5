#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every source file of the repository names its license in an SPDX line
# within its first three lines (LICENSE says which license and why).
#
# Usage: tools/dev/spdx_check.sh [--list] [ROOT]
#   ROOT     the tree to check (default: this repository)
#   --list   print the files that must carry the line, check nothing
# Exit 0 when every file carries `SPDX-License-Identifier: MIT`, 1 naming each
# file that does not, 2 on bad usage.
#
# Source files: C, C++, Protobuf, shell, Python, CMake, linker version
# scripts, the .in templates, and the extension-less scripts under tools/lab
# and .ci. Data (tests/testdata, fuzz corpora, JSON, hex, golden outputs) and
# docs are not source; NOTICE names the third-party text among them.
set -uo pipefail

list_only=0
if [[ ${1:-} == --list ]]; then list_only=1; shift; fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
[[ -d $root ]] || { echo "spdx_check.sh: '$root' is not a directory" >&2; exit 2; }
(($# <= 1)) || { echo "usage: spdx_check.sh [--list] [ROOT]" >&2; exit 2; }

# The tree's files: git's list in a clone, else every file outside build dirs.
files() {
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
    [[ $(git -C "$root" rev-parse --show-toplevel) == "$(cd "$root" && pwd -P)" ]]; then
    git -C "$root" ls-files
  else
    (cd "$root" && find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||')
  fi
}

is_source() {
  local f=$1
  case $f in
    tests/testdata/* | */corpus*/* | docs/* | */__pycache__/*) return 1 ;;
  esac
  case $f in
    *.cc | *.h | *.c | *.proto | *.sh | *.py | *.cmake | */CMakeLists.txt | CMakeLists.txt | *.map | *.in) return 0 ;;
    tools/lab/* | .ci/*) [[ ${f##*/} != *.* ]] && return 0 ;;
  esac
  return 1
}

missing=0
while IFS= read -r f; do
  is_source "$f" || continue
  if ((list_only)); then echo "$f"; continue; fi
  if ! head -n 3 "$root/$f" | grep -q 'SPDX-License-Identifier: MIT'; then
    echo "spdx_check.sh: $f: no 'SPDX-License-Identifier: MIT' in its first 3 lines" >&2
    missing=$((missing + 1))
  fi
done < <(files)
((list_only)) && exit 0
if ((missing)); then
  echo "spdx_check.sh: $missing source file(s) without the SPDX line (see LICENSE)" >&2
  exit 1
fi
exit 0
