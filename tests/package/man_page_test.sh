#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks a generated man page against its tool: every option --help lists
# (each `--word`) appears in the page, every line of its "Exit status:"
# section (exit_codes.h's table: the status, then its meaning) is in the page
# as help2man lays it out (the status, its meaning on the next line), and its
# header carries the version --version prints.
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
# Each exit status line "  N    MEANING" of --help: ".TP", "N", "MEANING".
help=$("$tool" --help)
in_exit=0 statuses=0
while IFS= read -r line; do
  if [[ $line == "Exit status:" ]]; then in_exit=1; continue; fi
  ((in_exit)) || continue
  [[ -z $line ]] && break
  if [[ $line =~ ^\ \ ([0-9]+)\ +(.+)$ ]]; then
    statuses=$((statuses + 1))
    grep -xF -A1 -e "${BASH_REMATCH[1]}" <<<"$text" |
      grep -qxF -e "${BASH_REMATCH[2]}" || missing+=("exit ${BASH_REMATCH[1]}: ${BASH_REMATCH[2]}")
  fi
done <<<"$help"
((statuses > 0)) || missing+=("an Exit status: section in --help")
# The header (.TH) carries the version of the first --version line.
version=$("$tool" --version | head -n 1 | awk '{ print $NF }')
grep -qE -e "^\.TH .*[ \"]$version\"" <<<"$text" || missing+=("version $version in .TH")
if [[ ${#missing[@]} -ne 0 ]]; then
  echo "$page lacks what '$tool --help/--version' prints: ${missing[*]}" >&2
  echo "(rebuild: the page is generated from the tool by help2man)" >&2
  exit 1
fi
echo "$page: $(wc -l <"$page") lines, every option of --help and its $statuses exit statuses present"
