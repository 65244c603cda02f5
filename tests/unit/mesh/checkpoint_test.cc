// SPDX-License-Identifier: MIT
// The mesh's checkpoint records (mesh/src/checkpoint.h): what ranks gather
// about failed pairs survives the trip, and a broken record from a peer is
// skipped, never a crash.
#include "checkpoint.h"

#include <gtest/gtest.h>

namespace qpconnect::mesh_internal {
namespace {

TEST(MeshCheckpoint, RoundTripsStatisticsAndFailuresWithTabsAndNewlinesFlattened) {
  CheckpointRecord c;
  c.connected = 5;
  c.slowest_ms = 12.5;
  c.slowest_peer = 3;
  c.failures.push_back({0, 3, "host\ta", "host\nb", "validate: error gid-family-mismatch"});
  c.codes.push_back(ErrorCode::kIncompatible);
  c.failures.push_back({1, 2, "h1", "h2", "modify RTR refused"});
  c.codes.push_back(ErrorCode::kVerbs);
  const CheckpointRecord back = DecodeCheckpoint(EncodeCheckpoint(c));
  EXPECT_EQ(back.connected, 5u);
  EXPECT_DOUBLE_EQ(back.slowest_ms, 12.5);
  EXPECT_EQ(back.slowest_peer, 3);
  ASSERT_EQ(back.failures.size(), 2u);
  EXPECT_EQ(back.failures[0].rank_a, 0);
  EXPECT_EQ(back.failures[0].rank_b, 3);
  EXPECT_EQ(back.failures[0].host_a, "host a");
  EXPECT_EQ(back.failures[0].host_b, "host b");
  EXPECT_EQ(back.failures[0].what, "validate: error gid-family-mismatch");
  ASSERT_EQ(back.codes.size(), 2u);
  EXPECT_EQ(back.codes[0], ErrorCode::kIncompatible);
  EXPECT_EQ(back.codes[1], ErrorCode::kVerbs);
}

TEST(MeshCheckpoint, BrokenRecordsAreSkippedAndUnknownCodesReadAsIncompatible) {
  const std::string text =
      "S\tnot-a-number\t1\t2\n"
      "F\t0\t1\th\th\t999\tcode out of range\n"
      "F\t0\tx\th\th\t1\tbad rank\n"
      "F\ttoo\tfew\n"
      "\n"
      "garbage without tabs\n"
      "S\t7\t3.5\t1\n";
  const CheckpointRecord c = DecodeCheckpoint(text);
  EXPECT_EQ(c.connected, 7u);
  EXPECT_EQ(c.slowest_peer, 1);
  ASSERT_EQ(c.failures.size(), 1u);
  EXPECT_EQ(c.failures[0].what, "code out of range");
  EXPECT_EQ(c.codes[0], ErrorCode::kIncompatible);
}

}  // namespace
}  // namespace qpconnect::mesh_internal
