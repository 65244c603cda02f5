// SPDX-License-Identifier: MIT
// QPs grouped by a 64-bit key (a QP number, a (qpn, dest_qpn) pair, a
// (device, qpn) pair) in one sorted array, and the keys.
//
// Internal to pairing.cc (rules in qpconnect/observe/pairing.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace qpconnect::pairing_detail {

// QPs grouped by a 64-bit key in one sorted array (no table of vectors: a
// million QPs would make a million of them).
class GroupIndex {
 public:
  // key(i) -> std::optional<uint64_t>: the group of QP i, if any.
  template <typename KeyFn>
  void Build(size_t n, KeyFn key) {
    std::vector<std::pair<uint64_t, size_t>> v;
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (std::optional<uint64_t> k = key(i)) v.push_back({*k, i});
    }
    std::sort(v.begin(), v.end());
    keys_.reserve(v.size());
    members_.reserve(v.size());
    for (const auto& [k, i] : v) {
      keys_.push_back(k);
      members_.push_back(i);
    }
    built_ = true;
  }

  bool built() const { return built_; }

  // f(key, members) for each group, in key order.
  template <typename F>
  void ForEachGroup(F f) const {
    for (size_t a = 0; a < keys_.size();) {
      size_t b = a + 1;
      while (b < keys_.size() && keys_[b] == keys_[a]) ++b;
      f(keys_[a], std::span<const size_t>(members_.data() + a, b - a));
      a = b;
    }
  }

  std::span<const size_t> Find(uint64_t key) const {
    auto lo = std::lower_bound(keys_.begin(), keys_.end(), key);
    auto hi = std::upper_bound(lo, keys_.end(), key);
    return {members_.data() + (lo - keys_.begin()), static_cast<size_t>(hi - lo)};
  }

 private:
  std::vector<uint64_t> keys_;
  std::vector<size_t> members_;
  bool built_ = false;
};

inline uint64_t PairKey(uint32_t qpn, uint32_t dest) { return (uint64_t{qpn} << 32) | dest; }
inline uint64_t Reversed(uint64_t pair_key) { return (pair_key << 32) | (pair_key >> 32); }
inline uint64_t DevKey(uint32_t dev, uint32_t qpn) { return (uint64_t{dev} << 32) | qpn; }

}  // namespace qpconnect::pairing_detail
