# SPDX-License-Identifier: MIT
# perftest_unmeasured FILE...: true (0) when a perftest output among FILEs
# says its own CPU-clock sampling failed ("Correlation coefficient r^2: ... <
# 0.9", then "Can't produce a report"): a guest starved by host load, not the
# program under test; the lab scripts run such a pair again (at most twice)
# and say so. Prints the correlation line when there is one.
perftest_unmeasured() {
  grep -qs "Can't produce a report" "$@" || return 1
  grep -hs 'Correlation coefficient' "$@" | head -n 1
  return 0
}
