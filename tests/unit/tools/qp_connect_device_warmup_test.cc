// SPDX-License-Identifier: MIT
// qp-connect's device-list warm-up (tools/qp-connect/device_warmup.h): which
// command lines start it. That it overlaps the start is measured in the lab
// (docs/performance.md); that it changes nothing a run does, by every lab test.
#include "device_warmup.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace qpconnect::tools {
namespace {

using Args = std::vector<std::string>;

TEST(DeviceWarmup, WantedForRunsThatOpenADevice) {
  EXPECT_TRUE(WarmupWanted({}));
  EXPECT_TRUE(WarmupWanted(Args{"-d", "rxe1", "10.99.0.1"}));
  EXPECT_TRUE(WarmupWanted(Args{"--oob", "file", "--role", "server"}));
  EXPECT_TRUE(WarmupWanted(Args{"-d", "rxe0", "--", "--help"}));  // a positional
}

TEST(DeviceWarmup, NotWantedForRunsThatOpenNone) {
  EXPECT_FALSE(WarmupWanted(Args{"--help"}));
  EXPECT_FALSE(WarmupWanted(Args{"-h"}));
  EXPECT_FALSE(WarmupWanted(Args{"-vh"}));
  EXPECT_FALSE(WarmupWanted(Args{"-d", "rxe0", "--version"}));
  EXPECT_FALSE(WarmupWanted(Args{"--gen-psk", "k"}));
  EXPECT_FALSE(WarmupWanted(Args{"--gen-psk=k"}));
  EXPECT_FALSE(WarmupWanted(Args{"--oob", "mpi", "--devices", "rxe0"}));
  EXPECT_FALSE(WarmupWanted(Args{"--oob=mpi"}));
}

TEST(DeviceWarmup, StartsAndJoinsOrStaysIdle) {
  {
    DeviceWarmup idle(Args{"--version"});
    EXPECT_FALSE(idle.started());
  }
  // Without a device the thread finds none and ends; the destructor joins.
  DeviceWarmup busy(Args{"-d", "rxe0"});
  EXPECT_TRUE(busy.started());
}

}  // namespace
}  // namespace qpconnect::tools
