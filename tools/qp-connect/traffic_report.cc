// SPDX-License-Identifier: MIT
#include "traffic_report.h"

#include <cstdio>

#include "qpconnect/traffic_stats.h"

namespace qpconnect::tools {
namespace {

using nlohmann::ordered_json;

// What one QP (qps = 1) or all of them moved in one ping-pong.
struct Measured {
  double bw_peak = 0;  // in the report's unit
  double bw_avg = 0;
  double msg_rate_mpps = 0;
};

Measured Measure(const verbs::SizeTrafficStats& s, uint64_t qps, const LatencySummary& rtt,
                 const TrafficFormat& f) {
  const uint64_t per_round = uint64_t{2} * s.size;  // SEND and reply
  const Rates r = RatesOf(per_round * s.iterations * qps, 2 * s.iterations * qps, s.seconds,
                          per_round, rtt.count > 0 ? rtt.min_ns : 0);
  auto unit = [&](double bytes_per_s) {
    return f.gbits ? ToGigabitsPerSecond(bytes_per_s) : ToMegabytesPerSecond(bytes_per_s);
  };
  return {unit(r.peak_bytes_per_s), unit(r.bytes_per_s), r.messages_per_s / 1e6};
}

double Us(uint64_t ns) { return static_cast<double>(ns) / 1e3; }

ordered_json LatencyJson(const LatencySummary& l) {
  if (l.count == 0) {
    return {{"samples", 0},   {"min", nullptr}, {"p50", nullptr},
            {"p99", nullptr}, {"max", nullptr}, {"avg", nullptr}};
  }
  return {{"samples", l.count},  {"min", Us(l.min_ns)}, {"p50", Us(l.p50_ns)},
          {"p99", Us(l.p99_ns)}, {"max", Us(l.max_ns)}, {"avg", l.avg_ns / 1e3}};
}

ordered_json MeasuredJson(const Measured& m, const LatencySummary& rtt) {
  return {{"bw_peak", m.bw_peak},
          {"bw_avg", m.bw_avg},
          {"msg_rate_mpps", m.msg_rate_mpps},
          {"latency_us", LatencyJson(rtt)}};
}

// The columns after the first two: bandwidth, rate, latency.
std::string Columns(const Measured& m, const LatencySummary& rtt) {
  char line[200];
  if (rtt.count == 0) {
    std::snprintf(line, sizeof line, " %-16.2f %-19.2f %-14.6f %-12s %-12s %-12s %s\n", m.bw_peak,
                  m.bw_avg, m.msg_rate_mpps, "-", "-", "-", "-");
  } else {
    std::snprintf(line, sizeof line, " %-16.2f %-19.2f %-14.6f %-12.2f %-12.2f %-12.2f %.2f\n",
                  m.bw_peak, m.bw_avg, m.msg_rate_mpps, Us(rtt.min_ns), Us(rtt.p50_ns),
                  Us(rtt.p99_ns), Us(rtt.max_ns));
  }
  return line;
}

}  // namespace

const char* BandwidthUnit(const TrafficFormat& f) { return f.gbits ? "Gb/s" : "MB/s"; }

ordered_json TrafficResultsJson(const verbs::TrafficReport& r, const TrafficFormat& f) {
  ordered_json results = ordered_json::array();
  for (const auto& s : r.sizes) {
    ordered_json entry = {{"size", s.size}, {"iters", s.iterations}, {"seconds", s.seconds}};
    entry.update(MeasuredJson(Measure(s, s.qps.size(), s.rtt, f), s.rtt));
    ordered_json qps = ordered_json::array();
    for (size_t i = 0; i < s.qps.size(); ++i) {
      ordered_json q = {{"index", i}};
      if (i < f.qpns.size()) q["qpn"] = f.qpns[i];
      q.update(MeasuredJson(Measure(s, 1, s.qps[i].rtt, f), s.qps[i].rtt));
      qps.push_back(std::move(q));
    }
    entry["qps"] = std::move(qps);
    results.push_back(std::move(entry));
  }
  return results;
}

ordered_json TrafficSummaryJson(const verbs::TrafficReport& r, uint32_t size,
                                const TrafficFormat& f) {
  return {{"iters", r.iterations},
          {"size", size},
          {"messages", r.messages},
          {"seconds", r.seconds},
          {"avg_rtt_us", r.avg_rtt_us},
          {"mbit_per_s", r.mbit_per_s},
          {"bw_unit", BandwidthUnit(f)},
          {"results", TrafficResultsJson(r, f)},
          {"completion", f.events ? "events" : "polling"},
          {"completion_events", r.completion_events}};
}

std::string TrafficOkText(const verbs::TrafficReport& r, uint32_t size, size_t qps) {
  char text[256];
  const auto iters = static_cast<unsigned long long>(r.iterations);
  int n = 0;
  if (r.sizes.size() > 1) {
    n = std::snprintf(text, sizeof text, "sizes %u..%u bytes (%zu sizes, %llu iterations in all)",
                      r.sizes.front().size, size, r.sizes.size(), iters);
  } else {
    n = std::snprintf(text, sizeof text, "%llu x %u bytes", iters, size);
  }
  std::snprintf(text + n, sizeof text - static_cast<size_t>(n),
                " on %zu QP(s), %.1f us/round trip, %.1f Mbit/s", qps, r.avg_rtt_us, r.mbit_per_s);
  return text;
}

std::string TrafficTable(const verbs::TrafficReport& r, const TrafficFormat& f) {
  const std::string unit = f.gbits ? "Gb/sec" : "MB/sec";
  const std::string peak = "BW peak[" + unit + "]";
  const std::string avg = "BW average[" + unit + "]";
  char head[240];
  std::snprintf(head, sizeof head, " %-10s %-10s %-16s %-19s %-14s %-12s %-12s %-12s %s\n",
                "#bytes", "#iters", peak.c_str(), avg.c_str(), "MsgRate[Mpps]", "t_min[usec]",
                "t_p50[usec]", "t_p99[usec]", "t_max[usec]");
  std::string out = head;
  for (const auto& s : r.sizes) {
    char first[64];
    std::snprintf(first, sizeof first, " %-10u %-10llu", s.size,
                  static_cast<unsigned long long>(s.iterations));
    out += first + Columns(Measure(s, s.qps.size(), s.rtt, f), s.rtt);
    if (s.qps.size() < 2) continue;
    for (size_t i = 0; i < s.qps.size(); ++i) {
      char name[64];
      std::snprintf(name, sizeof name, "   qp 0x%06x #%-6zu", i < f.qpns.size() ? f.qpns[i] : 0U,
                    i);
      out += name + Columns(Measure(s, 1, s.qps[i].rtt, f), s.qps[i].rtt);
    }
  }
  return out;
}

}  // namespace qpconnect::tools
