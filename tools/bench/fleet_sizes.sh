#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark (issue 41 item 3): the fleet benchmark (fleet.sh) at several
# sizes, with and without destination addresses, and fleet_check's verdict
# on each: pairs with the wrong peer, healthy pairs accused, faults named.
#
#   tools/bench/fleet_sizes.sh BUILD_DIR [HOSTSxQPS...]
#       (default 16x1000 64x1000 256x1000 256x100 100x400 32x200)
#
# Prints one line per run; exits 1 when any run's fleet_check fails.
set -uo pipefail
build=${1:?usage: fleet_sizes.sh BUILD_DIR [HOSTSxQPS...]}
shift
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(16x1000 64x1000 256x1000 256x100 100x400 32x200)
here=$(cd "$(dirname "$0")" && pwd)
echo "fleet_sizes: $(uptime)"
failed=0
for size in "${sizes[@]}"; do
  [[ $size =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "fleet_sizes: $size is not HOSTSxQPS" >&2; exit 2; }
  for dest in "" --no-dest; do
    out=$("$here/fleet.sh" "$build" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" $dest 2>&1)
    verdict=$(grep -m1 '^fleet_check:' <<<"$out" || echo "fleet_check: no verdict")
    [[ $verdict == "fleet_check: PASS" ]] || failed=$((failed + 1))
    printf '%-9s %-9s %s; %s; %s; %s\n' "$size" "${dest:-dest}" \
      "$(grep -m1 '^pairs:' <<<"$out" | sed 's/^pairs: //')" \
      "$(grep -m1 '^without a peer:' <<<"$out")" "$(grep -m1 '^accused:' <<<"$out")" "$verdict"
  done
done
echo "fleet_sizes: $failed failed runs"
[[ $failed -eq 0 ]]
