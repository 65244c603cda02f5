// SPDX-License-Identifier: MIT
// The lab's description of its two devices (tools/lab exports QPC_* variables).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "skip_or_fail.h"

namespace qpconnect::testing {

struct LabEnv {
  std::string dev0, dev1;
  uint16_t gid0 = 0, gid1 = 0;
  std::string ip0, ip1;
};

// nullopt outside the lab (LabFixture then skips or fails with the reason).
inline std::optional<LabEnv> LabFromEnv() {
  const char* d0 = std::getenv("QPC_DEV0");
  const char* d1 = std::getenv("QPC_DEV1");
  const char* g0 = std::getenv("QPC_GID0");
  const char* g1 = std::getenv("QPC_GID1");
  if (!d0 || !d1 || !g0 || !g1) return std::nullopt;
  LabEnv e;
  e.dev0 = d0;
  e.dev1 = d1;
  e.gid0 = static_cast<uint16_t>(std::atoi(g0));
  e.gid1 = static_cast<uint16_t>(std::atoi(g1));
  if (const char* ip = std::getenv("QPC_IP0")) e.ip0 = ip;
  if (const char* ip = std::getenv("QPC_IP1")) e.ip1 = ip;
  return e;
}

// A fixture for tests that need the lab: SetUp() fills env_ inside it;
// outside it, the test is skipped (QPC_SKIP_OR_FAIL, skip_or_fail.h), or
// fails under QPCONNECT_LAB_REQUIRED=1 or CI=true. Never passed: a binary
// whose tests all skipped exits 77 (lab_gtest_main.cc), which CTest reports
// as skipped. A derived SetUp() calls it first and returns if !InLab(); so
// does a TearDown() that needs the lab.
class LabFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = LabFromEnv();
    if (!env) {
      QPC_SKIP_OR_FAIL(
          "not in the Soft-RoCE lab (QPC_DEV0/QPC_DEV1/QPC_GID0/QPC_GID1 unset): "
          "run via tools/lab");
    }
    env_ = *env;
    in_lab_ = true;
  }
  bool InLab() const { return in_lab_; }
  LabEnv env_;

 private:
  bool in_lab_ = false;
};

}  // namespace qpconnect::testing
