// SPDX-License-Identifier: MIT
// ReadSysfsPortCounters over a sysfs-shaped directory tree: rxe's
// hw_counters, the IB counters/ of other devices, the port state, and a
// port without counters.
#include "qpconnect/verbs/port_counters.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace qpconnect {
namespace {

namespace fs = std::filesystem;

class SysfsTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("qpc_counters_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Put(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path root_;
};

TEST_F(SysfsTree, ReadsRxeHwCountersAndTheState) {
  Put("rxe1/ports/1/state", "4: ACTIVE\n");
  Put("rxe1/ports/1/hw_counters/sent_pkts", "8\n");
  Put("rxe1/ports/1/hw_counters/rcvd_pkts", "0\n");
  Put("rxe1/ports/1/hw_counters/lifespan", "12\n");
  Put("rxe1/ports/1/hw_counters/odd", "n/a\n");
  PortCounters c = verbs::ReadSysfsPortCounters("rxe1", 1, root_.string());
  EXPECT_EQ(c.device, "rxe1");
  EXPECT_EQ(c.state, "ACTIVE");
  EXPECT_TRUE(c.unknown.empty());
  EXPECT_EQ(c.Get("sent_pkts"), 8u);
  EXPECT_EQ(c.Get("rcvd_pkts"), 0u);
  EXPECT_FALSE(c.Get("odd"));                 // not a number: left out
  ASSERT_EQ(c.values.size(), 2u);             // lifespan is a setting, not a counter
  EXPECT_EQ(c.values[0].first, "rcvd_pkts");  // name order
}

TEST_F(SysfsTree, ReadsIbCountersBesideHwCounters) {
  Put("mlx5_0/ports/1/state", "1: DOWN\n");
  Put("mlx5_0/ports/1/hw_counters/out_of_sequence", "3\n");
  Put("mlx5_0/ports/1/counters/port_xmit_packets", "20\n");
  Put("mlx5_0/ports/1/counters/port_rcv_packets", "17\n");
  PortCounters c = verbs::ReadSysfsPortCounters("mlx5_0", 1, root_.string());
  EXPECT_EQ(c.state, "DOWN");
  PacketCounts p = PacketCountsOf(c);
  EXPECT_EQ(p.sent, 20u);
  EXPECT_EQ(p.received, 17u);
  EXPECT_EQ(p.discarded, 3u);
}

TEST_F(SysfsTree, SaysWhyWhenThePortHasNoCounters) {
  Put("rxe0/ports/1/state", "4: ACTIVE\n");
  PortCounters c = verbs::ReadSysfsPortCounters("rxe0", 1, root_.string());
  EXPECT_TRUE(c.values.empty());
  EXPECT_NE(c.unknown.find("no counters under"), std::string::npos) << c.unknown;
}

}  // namespace
}  // namespace qpconnect
