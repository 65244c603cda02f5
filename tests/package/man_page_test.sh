#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks a generated man page against its tool: every option --help lists
# (each `--word`) appears in the page, and its header carries the version
# --version prints.
# Usage: man_page_test.sh TOOL PAGE.1
set -euo pipefail
tool=$1 page=$2
[[ -s "$page" ]] || { echo "man page $page is missing or empty" >&2; exit 1; }
# groff escapes a hyphen as \-; read the page with plain hyphens.
text=$(sed 's/\\-/-/g' "$page")
missing=()
while read -r option; do
  grep -qE -e "$option([^a-z0-9-]|\$)" <<<"$text" || missing+=("$option")
done < <("$tool" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
# The header (.TH) carries the version of the first --version line.
version=$("$tool" --version | head -n 1 | awk '{ print $NF }')
grep -qE -e "^\.TH .*[ \"]$version\"" <<<"$text" || missing+=("version $version in .TH")
if [[ ${#missing[@]} -ne 0 ]]; then
  echo "$page lacks what '$tool --help/--version' prints: ${missing[*]}" >&2
  echo "(rebuild: the page is generated from the tool by help2man)" >&2
  exit 1
fi
echo "$page: $(wc -l <"$page") lines, every option of --help present"
