// SPDX-License-Identifier: MIT
#include "qpconnect/traffic_stats.h"

namespace qpconnect {
namespace {

// Percentiles of `kept` (reordered) into `s`.
void FillPercentiles(std::vector<uint32_t>& kept, LatencySummary& s) {
  s.kept = kept.size();
  if (kept.empty()) return;
  s.p50_ns = NearestRank(kept, 50);
  s.p99_ns = NearestRank(kept, 99);
}

}  // namespace

LatencySamples::LatencySamples(size_t capacity)
    : capacity_(std::max<size_t>(2, capacity + (capacity & 1))) {}

void LatencySamples::Add(uint64_t ns) {
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  sum_ += static_cast<long double>(ns);
  if (count_++ % stride_ != 0) return;
  if (kept_.size() == capacity_) {
    // Keep the samples at even positions: their indices are the multiples of
    // the doubled stride, as the next kept one's (capacity_ is even).
    for (size_t i = 0; i < capacity_ / 2; ++i) kept_[i] = kept_[2 * i];
    kept_.resize(capacity_ / 2);
    stride_ *= 2;
    if ((count_ - 1) % stride_ != 0) return;
  }
  kept_.push_back(static_cast<uint32_t>(std::min<uint64_t>(ns, UINT32_MAX)));
}

LatencySummary LatencySamples::Summary() const { return Merge({*this}); }

LatencySummary LatencySamples::Merge(const std::vector<LatencySamples>& parts) {
  LatencySummary s;
  long double sum = 0;
  std::vector<uint32_t> all;
  for (const auto& p : parts) {
    if (p.count_ == 0) continue;
    s.min_ns = s.count == 0 ? p.min_ : std::min(s.min_ns, p.min_);
    s.max_ns = std::max(s.max_ns, p.max_);
    s.count += p.count_;
    sum += p.sum_;
    all.insert(all.end(), p.kept_.begin(), p.kept_.end());
  }
  if (s.count == 0) return s;
  s.avg_ns = static_cast<double>(sum / static_cast<long double>(s.count));
  FillPercentiles(all, s);
  return s;
}

Rates RatesOf(uint64_t bytes, uint64_t messages, double seconds, uint64_t bytes_per_round,
              uint64_t fastest_round_ns) {
  Rates r;
  if (seconds > 0) {
    r.bytes_per_s = static_cast<double>(bytes) / seconds;
    r.messages_per_s = static_cast<double>(messages) / seconds;
  }
  if (fastest_round_ns > 0) {
    r.peak_bytes_per_s =
        static_cast<double>(bytes_per_round) * 1e9 / static_cast<double>(fastest_round_ns);
  }
  return r;
}

double ToMegabytesPerSecond(double bytes_per_s) { return bytes_per_s / 1048576.0; }

double ToGigabitsPerSecond(double bytes_per_s) { return bytes_per_s * 8 / 1e9; }

std::vector<uint32_t> SweepSizes(uint32_t max_size) {
  std::vector<uint32_t> sizes;
  for (uint64_t s = 2; s <= max_size; s *= 2) sizes.push_back(static_cast<uint32_t>(s));
  return sizes;
}

}  // namespace qpconnect
