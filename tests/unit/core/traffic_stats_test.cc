// SPDX-License-Identifier: MIT
// Traffic statistics (issue 14): nearest-rank percentiles, the bounded
// latency recorder, rates and units, the -a size list; fixed samples only.
#include "qpconnect/traffic_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace qpconnect {
namespace {

TEST(NearestRank, OneToAThousand) {
  std::vector<uint64_t> s;
  for (uint64_t i = 1; i <= 1000; ++i) s.push_back(i);
  std::shuffle(s.begin(), s.end(), std::mt19937(14));
  EXPECT_EQ(NearestRank(s, 50), 500u);
  EXPECT_EQ(NearestRank(s, 99), 990u);
  EXPECT_EQ(NearestRank(s, 100), 1000u);
  EXPECT_EQ(NearestRank(s, 1), 10u);
}

TEST(NearestRank, FewSamples) {
  std::vector<int> one{7};
  EXPECT_EQ(NearestRank(one, 50), 7);
  EXPECT_EQ(NearestRank(one, 99), 7);
  std::vector<int> three{30, 10, 20};
  EXPECT_EQ(NearestRank(three, 50), 20);  // rank ceil(1.5) = 2
  EXPECT_EQ(NearestRank(three, 99), 30);
}

TEST(LatencySamples, EmptyIsAllZero) {
  LatencySummary s = LatencySamples().Summary();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.kept, 0u);
  EXPECT_EQ(s.min_ns, 0u);
  EXPECT_EQ(s.max_ns, 0u);
  EXPECT_EQ(s.p50_ns, 0u);
  EXPECT_EQ(s.avg_ns, 0);
}

TEST(LatencySamples, FixedSamples) {
  LatencySamples l;
  for (uint64_t ns : {9000ULL, 1000ULL, 3000ULL, 2000ULL, 5000ULL}) l.Add(ns);
  LatencySummary s = l.Summary();
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.kept, 5u);
  EXPECT_EQ(s.min_ns, 1000u);
  EXPECT_EQ(s.p50_ns, 3000u);
  EXPECT_EQ(s.p99_ns, 9000u);
  EXPECT_EQ(s.max_ns, 9000u);
  EXPECT_DOUBLE_EQ(s.avg_ns, 4000);
}

TEST(LatencySamples, ASlowTailShowsInP99AndMaxNotP50) {
  LatencySamples l;
  for (int i = 0; i < 98; ++i) l.Add(10);
  l.Add(5000);
  l.Add(9000);
  LatencySummary s = l.Summary();
  EXPECT_EQ(s.p50_ns, 10u);
  EXPECT_EQ(s.p99_ns, 5000u);
  EXPECT_EQ(s.max_ns, 9000u);
}

TEST(LatencySamples, FullRecorderKeepsEveryOtherAndStaysExactOnMinMaxAvg) {
  LatencySamples l(4);
  for (uint64_t i = 0; i < 10; ++i) l.Add(i * 100);
  // Kept: 0,1,2,3 -> 0,2 (stride 2) +4,6 -> 0,4 (stride 4) +8.
  EXPECT_EQ(l.kept(), (std::vector<uint32_t>{0, 400, 800}));
  LatencySummary s = l.Summary();
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.kept, 3u);
  EXPECT_EQ(s.min_ns, 0u);
  EXPECT_EQ(s.max_ns, 900u);
  EXPECT_DOUBLE_EQ(s.avg_ns, 450);
  EXPECT_EQ(s.p50_ns, 400u);
}

TEST(LatencySamples, MemoryStaysBounded) {
  LatencySamples l(1000);
  for (uint64_t i = 0; i < 1000000; ++i) l.Add(i);
  EXPECT_LE(l.kept().size(), 1000u);
  EXPECT_GE(l.kept().size(), 500u);
  LatencySummary s = l.Summary();
  EXPECT_EQ(s.count, 1000000u);
  // Evenly spread: the percentiles of the kept samples are near the true ones.
  EXPECT_NEAR(static_cast<double>(s.p50_ns), 500000, 5000);
  EXPECT_NEAR(static_cast<double>(s.p99_ns), 990000, 5000);
}

TEST(LatencySamples, HugeSamplesSaturateInPercentilesOnly) {
  LatencySamples l;
  l.Add(10'000'000'000ULL);  // 10 s
  LatencySummary s = l.Summary();
  EXPECT_EQ(s.max_ns, 10'000'000'000ULL);
  EXPECT_EQ(s.p50_ns, uint64_t{UINT32_MAX});
}

TEST(LatencySamples, MergeIsExactOverParts) {
  std::vector<LatencySamples> parts(3);
  parts[0].Add(100);
  parts[0].Add(300);
  parts[2].Add(200);
  parts[2].Add(1000);
  LatencySummary s = LatencySamples::Merge(parts);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.min_ns, 100u);
  EXPECT_EQ(s.max_ns, 1000u);
  EXPECT_EQ(s.p50_ns, 200u);
  EXPECT_EQ(s.p99_ns, 1000u);
  EXPECT_DOUBLE_EQ(s.avg_ns, 400);
}

TEST(Rates, AverageAndPeak) {
  // 1000 round trips of 4096 bytes each way in 0.5 s, the fastest in 8 us.
  Rates r = RatesOf(1000 * 2 * 4096, 2000, 0.5, 2 * 4096, 8000);
  EXPECT_DOUBLE_EQ(r.bytes_per_s, 16384000);
  EXPECT_DOUBLE_EQ(r.messages_per_s, 4000);
  EXPECT_DOUBLE_EQ(r.peak_bytes_per_s, 1024000000);
}

TEST(Rates, NoTimeNoRate) {
  Rates r = RatesOf(100, 1, 0, 100, 0);
  EXPECT_EQ(r.bytes_per_s, 0);
  EXPECT_EQ(r.messages_per_s, 0);
  EXPECT_EQ(r.peak_bytes_per_s, 0);
}

TEST(Rates, PerftestUnits) {
  EXPECT_DOUBLE_EQ(ToMegabytesPerSecond(1048576.0 * 3), 3);
  EXPECT_DOUBLE_EQ(ToGigabitsPerSecond(125'000'000), 1);
}

TEST(SweepSizes, PowersOfTwoUpToTheMessageSize) {
  EXPECT_EQ(SweepSizes(4096),
            (std::vector<uint32_t>{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(SweepSizes(100), (std::vector<uint32_t>{2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(SweepSizes(2), (std::vector<uint32_t>{2}));
  EXPECT_TRUE(SweepSizes(1).empty());
  EXPECT_EQ(SweepSizes(UINT32_MAX).back(), 1U << 31);
}

}  // namespace
}  // namespace qpconnect
