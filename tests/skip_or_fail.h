// SPDX-License-Identifier: MIT
// The one skip policy for GoogleTest cases; tools/lab/skip_or_fail.sh is the
// same policy for test scripts. A case that cannot run here (outside the lab,
// no IPv6 loopback, ...) is skipped, except under QPCONNECT_LAB_REQUIRED=1
// (.ci/run sets it) or CI=true: a CI run that skipped a case proved nothing
// about it, so there the skip is a failure. Thread-compatible (reads the
// environment).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

// Not qpconnect::testing: declaring that namespace here would hide ::testing
// (gmock's matchers) from tests written inside namespace qpconnect.
namespace qpconnect::skip_policy {

// True when a skip must be a failure: QPCONNECT_LAB_REQUIRED=1 or CI=true.
inline bool SkipsAreFailures() {
  const char* required = std::getenv("QPCONNECT_LAB_REQUIRED");
  const char* ci = std::getenv("CI");
  return (required != nullptr && std::string_view(required) == "1") ||
         (ci != nullptr && std::string_view(ci) == "true");
}

}  // namespace qpconnect::skip_policy

// QPC_SKIP_OR_FAIL(reason): GTEST_SKIP() << reason, or, when skips are
// failures, GTEST_FAIL() << reason. Either way it returns from the current
// function, so it belongs in a test body or a SetUp() (whose caller, a
// derived SetUp(), must then return too). `reason` may be a stream chain:
// QPC_SKIP_OR_FAIL("no IPv6 loopback: " << error).
#define QPC_SKIP_OR_FAIL(reason)                                                                  \
  do {                                                                                            \
    if (::qpconnect::skip_policy::SkipsAreFailures()) {                                           \
      GTEST_FAIL() << "a skip is a failure with QPCONNECT_LAB_REQUIRED=1 or CI=true: " << reason; \
    } else {                                                                                      \
      GTEST_SKIP() << reason;                                                                     \
    }                                                                                             \
  } while (false)
