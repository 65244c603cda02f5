// SPDX-License-Identifier: MIT
// Statistics of a traffic run, as pure logic (no verbs): percentiles by
// nearest rank, a bounded recorder of per-round-trip latency samples, and the
// rates derived from bytes, messages and time.
//
// Thread-safety: plain values; one thread per LatencySamples.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

namespace qpconnect {

// The nearest-rank percentile of `samples`: the smallest sample with at least
// `percent`% of the samples at or below it (p50 of 1..1000 is 500, p99 is
// 990). Reorders `samples` (nth_element). REQUIRES: samples not empty,
// 0 < percent <= 100.
template <typename T>
T NearestRank(std::vector<T>& samples, unsigned percent) {
  size_t k = (samples.size() * percent + 99) / 100;
  k = std::max<size_t>(k, 1) - 1;
  const auto at = samples.begin() + static_cast<std::ptrdiff_t>(k);
  std::nth_element(samples.begin(), at, samples.end());
  return *at;
}

// Latency of a set of samples, in nanoseconds. count, min, max and avg are
// exact over every sample added; p50 and p99 come from the samples kept
// (every one until the recorder's capacity, then every 2nd, 4th, ...).
struct LatencySummary {
  uint64_t count = 0;  // samples added
  uint64_t kept = 0;   // samples the percentiles come from
  uint64_t min_ns = 0;
  uint64_t p50_ns = 0;
  uint64_t p99_ns = 0;
  uint64_t max_ns = 0;
  double avg_ns = 0;
};

// Records latency samples at a low cost per sample (a compare or two and a
// 4-byte append) within bounded memory: once `capacity` samples are kept, it
// keeps every other one and from then on records every 2nd sample (then 4th,
// ...), so the kept samples stay evenly spread over the run. Kept samples are
// stored as 32-bit nanoseconds: a sample above ~4.29 s counts as 4.29 s in the
// percentiles (min and max stay exact).
class LatencySamples {
 public:
  static constexpr size_t kDefaultCapacity = size_t{1} << 20;

  // `capacity` is rounded up to an even number, at least 2.
  explicit LatencySamples(size_t capacity = kDefaultCapacity);

  void Add(uint64_t ns);
  uint64_t count() const { return count_; }
  const std::vector<uint32_t>& kept() const { return kept_; }

  // Zeros when no sample was added.
  LatencySummary Summary() const;
  // One summary over several recorders: count, min, max and avg exact, the
  // percentiles over all their kept samples together.
  static LatencySummary Merge(const std::vector<LatencySamples>& parts);

 private:
  size_t capacity_;
  uint64_t stride_ = 1;  // keep every stride_-th sample
  uint64_t count_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_ = 0;
  long double sum_ = 0;
  std::vector<uint32_t> kept_;
};

// What a run moved per second.
struct Rates {
  double bytes_per_s = 0;       // average: bytes / seconds
  double messages_per_s = 0;    // messages / seconds
  double peak_bytes_per_s = 0;  // bytes_per_round / the fastest round (0 without one)
};

// `bytes` and `messages` over `seconds` (zeros when seconds is 0); the peak is
// `bytes_per_round` moved in `fastest_round_ns` (zero when that is 0).
Rates RatesOf(uint64_t bytes, uint64_t messages, double seconds, uint64_t bytes_per_round,
              uint64_t fastest_round_ns);

// Bandwidth units as perftest reports them: MB/s with MB = 2^20 bytes, or
// (--report-gbits) Gb/s with Gb = 10^9 bits.
double ToMegabytesPerSecond(double bytes_per_s);
double ToGigabitsPerSecond(double bytes_per_s);

// The message sizes of a size sweep (perftest -a): every power of two from 2
// up to `max_size`, ascending. Empty when max_size < 2.
std::vector<uint32_t> SweepSizes(uint32_t max_size);

}  // namespace qpconnect
