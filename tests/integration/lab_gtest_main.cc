// SPDX-License-Identifier: MIT
// main() of the lab's GoogleTest binaries (connect_lab_test, capi_lab_test, ...),
// in place of gtest_main. Each binary is one CTest test (qpc_lab_test runs it
// whole inside the lab), and a gtest binary whose cases all skipped exits 0,
// which CTest would record as passed. So, from gtest's own counts:
//
//   every case that ran was skipped   exit 77 (the tests' SKIP_RETURN_CODE):
//                                     CTest reports the test as skipped
//   no case ran at all                exit 1: a --gtest_filter that matches
//                                     nothing tests nothing
//   otherwise                         RUN_ALL_TESTS()'s status
//
// The status, not SKIP_REGULAR_EXPRESSION on gtest's "[  SKIPPED ]" line: a
// regular expression matching the output turns a run into a skip whatever its
// exit status (hiding a failure next to a skip), and also matches when some
// cases passed; the counts say exactly "nothing passed, nothing failed".
// Under QPCONNECT_LAB_REQUIRED=1 or CI=true LabFixture fails instead of
// skipping (skip_or_fail.h), so there the binary fails.
#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (rc != 0 || GTEST_FLAG_GET(list_tests)) return rc;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  if (unit.test_to_run_count() == 0) {
    std::fprintf(stderr, "lab_gtest_main: no test ran (does --gtest_filter match any?)\n");
    return 1;
  }
  if (unit.successful_test_count() == 0 && unit.skipped_test_count() > 0) {
    std::fprintf(stderr, "lab_gtest_main: all %d test(s) skipped: exit 77 (skipped)\n",
                 unit.skipped_test_count());
    return 77;
  }
  return 0;
}
