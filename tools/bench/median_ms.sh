# SPDX-License-Identifier: MIT
# median_ms.sh: sourced by the benchmarks that time a command as a process
# (qp_info.sh, sa_paths.sh).
#
# median_ms command...: runs the command `runs` times (the caller's variable),
# its stdout discarded, and prints the median wall time of the runs that
# succeeded, in ms, without a newline: whole ms, or to a tenth ("12.3") with
# median_decimals=1 (the caller's variable; default 0). A run that failed is
# dropped (not timed: it may fail fast) and counted after the figure
# (" (2 failed runs dropped)"); "none" when every run failed.
median_ms() {
  local times=() i s e failed=0 unit=1000000 m
  [[ ${median_decimals:-0} -eq 1 ]] && unit=100000
  for ((i = 0; i < runs; i++)); do
    s=$(date +%s%N)
    if "$@" >/dev/null; then
      e=$(date +%s%N)
      times+=($(( (e - s) / unit )))
    else
      failed=$((failed + 1))
    fi
  done
  if [[ ${#times[@]} -eq 0 ]]; then printf none
  else
    m=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (${#times[@]} + 1) / 2 ))p")
    if [[ $unit -eq 100000 ]]; then printf '%d.%d' $((m / 10)) $((m % 10)); else printf '%s' "$m"; fi
  fi
  [[ $failed -eq 0 ]] || printf ' (%d failed runs dropped)' "$failed"
}
