// SPDX-License-Identifier: MIT
// qp-connect's traffic report (issue 14) from a fixed TrafficReport: the
// per-size and per-QP entries, the units of --report-gbits, the table.
#include <gtest/gtest.h>

#include "traffic_report.h"

namespace qpconnect::tools {
namespace {

LatencySummary Rtt(uint64_t count, uint64_t min, uint64_t p50, uint64_t p99, uint64_t max) {
  LatencySummary l;
  l.count = l.kept = count;
  l.min_ns = min;
  l.p50_ns = p50;
  l.p99_ns = p99;
  l.max_ns = max;
  l.avg_ns = static_cast<double>(p50);
  return l;
}

// Two QPs, 1000 iterations of 4096 bytes in 0.5 s; QP 0's fastest round trip
// 8 us, QP 1's 16 us.
verbs::TrafficReport TwoQps() {
  verbs::TrafficReport r;
  r.iterations = 1000;
  r.seconds = 0.5;
  verbs::SizeTrafficStats s;
  s.size = 4096;
  s.iterations = 1000;
  s.seconds = 0.5;
  s.rtt = Rtt(2000, 8000, 10000, 30000, 90000);
  s.qps = {{Rtt(1000, 8000, 9000, 20000, 90000)}, {Rtt(1000, 16000, 11000, 30000, 40000)}};
  r.sizes.push_back(s);
  return r;
}

TEST(TrafficReportJson, PerSizeAndPerQpInMegabytes) {
  TrafficFormat f;
  f.qpns = {0x11, 0x12};
  auto j = TrafficResultsJson(TwoQps(), f);
  ASSERT_EQ(j.size(), 1u);
  const auto& s = j[0];
  EXPECT_EQ(s["size"], 4096);
  EXPECT_EQ(s["iters"], 1000);
  // 2 QPs x 1000 round trips x 2 x 4096 bytes in 0.5 s, in 2^20-byte MB.
  EXPECT_DOUBLE_EQ(s["bw_avg"].get<double>(), 2.0 * 1000 * 8192 / 0.5 / 1048576);
  // One round trip's 8192 bytes in the fastest 8 us.
  EXPECT_DOUBLE_EQ(s["bw_peak"].get<double>(), 8192 / 8e-6 / 1048576);
  EXPECT_DOUBLE_EQ(s["msg_rate_mpps"].get<double>(), 4000 / 0.5 / 1e6);
  EXPECT_EQ(s["latency_us"]["samples"], 2000);
  EXPECT_DOUBLE_EQ(s["latency_us"]["min"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(s["latency_us"]["p50"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(s["latency_us"]["p99"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(s["latency_us"]["max"].get<double>(), 90);
  ASSERT_EQ(s["qps"].size(), 2u);
  EXPECT_EQ(s["qps"][1]["index"], 1);
  EXPECT_EQ(s["qps"][1]["qpn"], 0x12);
  EXPECT_DOUBLE_EQ(s["qps"][1]["bw_avg"].get<double>(), 1000.0 * 8192 / 0.5 / 1048576);
  EXPECT_DOUBLE_EQ(s["qps"][1]["bw_peak"].get<double>(), 8192 / 16e-6 / 1048576);
  EXPECT_DOUBLE_EQ(s["qps"][1]["latency_us"]["p99"].get<double>(), 30);
}

TEST(TrafficReportJson, GbitsChangeTheUnit) {
  TrafficFormat f;
  f.gbits = true;
  EXPECT_STREQ(BandwidthUnit(f), "Gb/s");
  EXPECT_STREQ(BandwidthUnit(TrafficFormat{}), "MB/s");
  auto j = TrafficResultsJson(TwoQps(), f);
  EXPECT_DOUBLE_EQ(j[0]["bw_avg"].get<double>(), 2.0 * 1000 * 8192 / 0.5 * 8 / 1e9);
  auto summary = TrafficSummaryJson(TwoQps(), 4096, f);
  EXPECT_EQ(summary["bw_unit"], "Gb/s");
  EXPECT_EQ(summary["iters"], 1000);
  EXPECT_EQ(summary["results"].size(), 1u);
  EXPECT_EQ(summary["completion"], "polling");
  f.events = true;
  EXPECT_EQ(TrafficSummaryJson(TwoQps(), 4096, f)["completion"], "events");
}

TEST(TrafficReportJson, NoSampleIsNullNotZero) {
  verbs::TrafficReport r = TwoQps();
  r.sizes[0].qps[0].rtt = LatencySummary{};  // a server's single round
  auto j = TrafficResultsJson(r, TrafficFormat{});
  EXPECT_EQ(j[0]["qps"][0]["latency_us"]["samples"], 0);
  EXPECT_TRUE(j[0]["qps"][0]["latency_us"]["p50"].is_null());
  EXPECT_EQ(j[0]["qps"][0]["bw_peak"], 0);
}

TEST(TrafficReportText, TableHasAHeaderASizeLineAndOneLinePerQp) {
  TrafficFormat f;
  f.qpns = {0x11, 0x12};
  const std::string t = TrafficTable(TwoQps(), f);
  EXPECT_NE(t.find("BW peak[MB/sec]"), std::string::npos) << t;
  EXPECT_NE(t.find("t_p99[usec]"), std::string::npos) << t;
  EXPECT_NE(t.find("\n 4096       1000       "), std::string::npos) << t;
  EXPECT_NE(t.find("qp 0x000011 #0"), std::string::npos) << t;
  EXPECT_NE(t.find("qp 0x000012 #1"), std::string::npos) << t;
  EXPECT_NE(t.find("30.00"), std::string::npos) << t;  // p99 in us
  f.gbits = true;
  EXPECT_NE(TrafficTable(TwoQps(), f).find("BW average[Gb/sec]"), std::string::npos);
}

TEST(TrafficReportText, OkLineForOneSizeAndForASweep) {
  verbs::TrafficReport r = TwoQps();
  r.avg_rtt_us = 12.5;
  r.mbit_per_s = 655.4;
  EXPECT_EQ(TrafficOkText(r, 4096, 2),
            "1000 x 4096 bytes on 2 QP(s), 12.5 us/round trip, 655.4 Mbit/s");
  verbs::SizeTrafficStats small = r.sizes[0];
  small.size = 2;
  r.sizes.insert(r.sizes.begin(), small);
  r.iterations = 2000;
  EXPECT_EQ(TrafficOkText(r, 4096, 2),
            "sizes 2..4096 bytes (2 sizes, 2000 iterations in all) on 2 QP(s), 12.5 us/round "
            "trip, 655.4 Mbit/s");
}

}  // namespace
}  // namespace qpconnect::tools
