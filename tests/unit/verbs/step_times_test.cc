// SPDX-License-Identifier: MIT
// The per-QP spread of a verbs step (issue 15): nearest-rank p50 and p99 and
// the sum, over samples in any order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "qpconnect/verbs/session.h"

namespace qpconnect::verbs {
namespace {

using std::chrono::nanoseconds;

TEST(SummarizeQpStep, EmptyIsAllZero) {
  std::vector<nanoseconds> none;
  QpStepTimes t = SummarizeQpStep(none);
  EXPECT_EQ(t.qps, 0u);
  EXPECT_EQ(t.total.count(), 0);
  EXPECT_EQ(t.p50.count(), 0);
  EXPECT_EQ(t.p99.count(), 0);
}

TEST(SummarizeQpStep, NearestRankOverShuffledSamples) {
  std::vector<nanoseconds> s;
  for (int i = 1; i <= 1000; ++i) s.emplace_back(i);
  std::shuffle(s.begin(), s.end(), std::mt19937(15));
  QpStepTimes t = SummarizeQpStep(s);
  EXPECT_EQ(t.qps, 1000u);
  EXPECT_EQ(t.total.count(), 500500);
  EXPECT_EQ(t.p50.count(), 500);
  EXPECT_EQ(t.p99.count(), 990);
}

TEST(SummarizeQpStep, OneSampleIsEveryPercentile) {
  std::vector<nanoseconds> s{nanoseconds(83000)};
  QpStepTimes t = SummarizeQpStep(s);
  EXPECT_EQ(t.qps, 1u);
  EXPECT_EQ(t.p50.count(), 83000);
  EXPECT_EQ(t.p99.count(), 83000);
}

TEST(SummarizeQpStep, ASlowTailShowsInP99NotP50) {
  std::vector<nanoseconds> s(98, nanoseconds(10));
  s.push_back(nanoseconds(5000));
  s.push_back(nanoseconds(9000));
  QpStepTimes t = SummarizeQpStep(s);
  EXPECT_EQ(t.p50.count(), 10);
  EXPECT_EQ(t.p99.count(), 5000);
}

}  // namespace
}  // namespace qpconnect::verbs
