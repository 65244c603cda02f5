# SPDX-License-Identifier: MIT
# skip_or_fail.sh: sourced by test scripts (tests/, tools/lab/lab-test). The
# one policy for a test that cannot run here - the lab does not start, a
# program or package is missing, MPI was not found when configuring:
#
#   qpc_skips_are_failures   true (status 0) when a skip must be a failure:
#                            QPCONNECT_LAB_REQUIRED=1 (.ci/run sets it) or
#                            CI=true (set by CI services)
#   skip_or_fail REASON...   prints "SKIP: REASON" and exits 77, which the
#                            tests register as SKIP_RETURN_CODE, so CTest
#                            reports a skip; when skips are failures, prints
#                            "FAIL: REASON (...)" and exits 1 instead
#
# tests/skip_or_fail.h is the same policy for GoogleTest cases. A CI run that
# skipped a test proved nothing about it, so there a skip is a failure.

qpc_skips_are_failures() {
  [[ "${QPCONNECT_LAB_REQUIRED:-}" == "1" || "${CI:-}" == "true" ]]
}

skip_or_fail() {
  if qpc_skips_are_failures; then
    echo "FAIL: $* (a skip is a failure with QPCONNECT_LAB_REQUIRED=1 or CI=true)"
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
