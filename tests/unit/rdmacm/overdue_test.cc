// SPDX-License-Identifier: MIT
// The sweep's rule for an overdue answer (rdmacm/src/overdue.h): an id waits
// on while its peer still talks on the link, up to rdma_cm's MRA bound; a
// silent peer times out after the answer timeout.
#include "overdue.h"

#include <gtest/gtest.h>

namespace qpconnect::rdmacm {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{1000};
const Clock::time_point kStart = Clock::time_point{} + std::chrono::hours(1);

TEST(PeerStillTalking, HeardWithinTheTimeoutWaitsOn) {
  // The REP sits behind this side's unread frames: the peer spoke 200 ms ago.
  auto now = kStart + milliseconds(3000);
  EXPECT_TRUE(PeerStillTalking(now, kStart, now - milliseconds(200), kTimeout));
}

TEST(PeerStillTalking, SilentForTheTimeoutFails) {
  auto now = kStart + milliseconds(3000);
  EXPECT_FALSE(PeerStillTalking(now, kStart, now - kTimeout, kTimeout));
  EXPECT_FALSE(PeerStillTalking(now, kStart, now - milliseconds(2500), kTimeout));
}

TEST(PeerStillTalking, NeverHeardFails) {
  auto now = kStart + milliseconds(3000);
  EXPECT_FALSE(PeerStillTalking(now, kStart, Clock::time_point{}, kTimeout));
}

TEST(PeerStillTalking, WaitsNoLongerThanTheMraBound) {
  // A peer that talks but never answers this id: rdma_cm's bound ends it.
  auto before = kStart + kMraBound - milliseconds(1);
  auto after = kStart + kMraBound;
  EXPECT_TRUE(PeerStillTalking(before, kStart, before - milliseconds(10), kTimeout));
  EXPECT_FALSE(PeerStillTalking(after, kStart, after - milliseconds(10), kTimeout));
}

TEST(PeerStillTalking, ATimeoutLongerThanTheBoundIsTheBound) {
  milliseconds longer = kMraBound + milliseconds(60000);
  auto now = kStart + kMraBound + milliseconds(1000);
  EXPECT_TRUE(PeerStillTalking(now, kStart, now - milliseconds(10), longer));
  EXPECT_FALSE(
      PeerStillTalking(kStart + longer, kStart, kStart + longer - milliseconds(10), longer));
}

}  // namespace
}  // namespace qpconnect::rdmacm
