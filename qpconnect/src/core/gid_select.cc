// SPDX-License-Identifier: MIT
#include "qpconnect/gid_select.h"

#include <string>
#include <tuple>

namespace qpconnect {
namespace {

std::string Summary(const std::vector<GidEntry>& table) {
  if (table.empty()) return "the port's GID table has no valid entry";
  std::string s = "valid entries:";
  for (const auto& g : table) {
    s += " [" + std::to_string(g.index) + "] " + GidToString(g.gid) + " " + GidTypeName(g.type);
  }
  return s;
}

}  // namespace

Result<GidEntry> SelectGid(const std::vector<GidEntry>& table, LinkLayer link_layer,
                           const GidPreference& preference,
                           const std::function<bool(const GidEntry&)>& configured) {
  if (preference.index) {
    if (*preference.index > kMaxSgidIndex) {
      return Error{ErrorCode::kInvalidArgument, 0, "select GID", "sgid_index",
                   "GID index " + std::to_string(*preference.index) +
                       " cannot be used: ibv_global_route.sgid_index is 8 bits (0.." +
                       std::to_string(kMaxSgidIndex) + "); " + Summary(table)};
    }
    for (const auto& g : table) {
      if (g.index == *preference.index) return g;
    }
    return Error{ErrorCode::kNotFound, 0, "select GID", "sgid_index",
                 "GID index " + std::to_string(*preference.index) + " is not a valid entry; " +
                     Summary(table)};
  }
  if (link_layer != LinkLayer::kEthernet) {
    for (const auto& g : table) {
      if (g.index == 0) return g;
    }
    return Error{ErrorCode::kNotFound, 0, "select GID", "sgid_index",
                 "no port GID at index 0; " + Summary(table)};
  }
  const GidEntry* best = nullptr;
  std::tuple<bool, bool, bool, bool> best_key{};
  for (const auto& g : table) {
    if (g.type != GidType::kRoceV1 && g.type != GidType::kRoceV2) continue;
    if (g.index > kMaxSgidIndex) continue;  // not expressible in an address vector
    GidFamily family = FamilyOfGid(g.gid, g.type);
    auto key = std::make_tuple(!configured || configured(g), g.type == GidType::kRoceV2,
                               family == preference.family, !IsLinkLocalGid(g.gid));
    if (best == nullptr || key > best_key) {  // ties keep the lower index
      best = &g;
      best_key = key;
    }
  }
  if (best == nullptr) {
    return Error{ErrorCode::kNotFound, 0, "select GID", "sgid_index",
                 "no RoCE GID on this Ethernet port (is an IP address configured on its "
                 "netdev?); " +
                     Summary(table)};
  }
  return *best;
}

}  // namespace qpconnect
