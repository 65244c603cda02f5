// SPDX-License-Identifier: MIT
// qp-connect's traffic report, as perftest prints one: per message size,
// bandwidth (peak and average), message rate and round-trip latency (min,
// p50, p99, max), for every QP and all of them together; in text and JSON.
//
// Definitions (docs/cli.md): a round trip moves `size` bytes each way, so
// bandwidth counts 2 x size bytes per round trip and the message rate two
// messages; the average is over the ping-pong's wall time, the peak is one
// round trip's bytes over the fastest round trip. MB/s are 2^20 bytes per
// second, Gb/s (--report-gbits) 10^9 bits per second, as perftest's.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "qpconnect/verbs/traffic.h"

namespace qpconnect::tools {

struct TrafficFormat {
  bool events = false;         // -e: the waits slept on completion events
  bool gbits = false;          // --report-gbits
  std::vector<uint32_t> qpns;  // this side's QPs, to name them
};

// "MB/s" or "Gb/s".
const char* BandwidthUnit(const TrafficFormat& f);

// The "traffic" fields both dialects report: "iters" (iterations run per QP,
// every size together), "size" (the message size), "messages", "seconds",
// "avg_rtt_us", "mbit_per_s" (as since version 1), "bw_unit", "results"
// (TrafficResultsJson), "completion" ("events" with -e, else "polling") and
// "completion_events" (how many events the waits took).
nlohmann::ordered_json TrafficSummaryJson(const verbs::TrafficReport& r, uint32_t size,
                                          const TrafficFormat& f);

// What follows "traffic ok: ": "1000 x 4096 bytes on 2 QP(s), 12.5 us/round
// trip, 655.4 Mbit/s"; a sweep: "sizes 2..4096 bytes (12 sizes, 12000
// iterations in all) on ...".
std::string TrafficOkText(const verbs::TrafficReport& r, uint32_t size, size_t qps);

// The "results" array of the JSON report: per size {"size", "iters",
// "seconds", "bw_peak", "bw_avg" (in BandwidthUnit), "msg_rate_mpps",
// "latency_us": {"samples", "min", "p50", "p99", "max", "avg"}, "qps": [per QP:
// {"index", "qpn", "bw_peak", "bw_avg", "msg_rate_mpps", "latency_us"}]}.
nlohmann::ordered_json TrafficResultsJson(const verbs::TrafficReport& r, const TrafficFormat& f);

// The table: a header, then per size a line for all the QPs and (with more
// than one QP) one per QP. Lines end with '\n'.
std::string TrafficTable(const verbs::TrafficReport& r, const TrafficFormat& f);

}  // namespace qpconnect::tools
