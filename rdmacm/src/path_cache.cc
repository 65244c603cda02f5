// SPDX-License-Identifier: MIT
#include "path_cache.h"

namespace qpconnect::rdmacm {

std::optional<RocePathFacts> LibraryQpEnv::ReadPath(const RocePathQuery& query) {
  const Key key{query.local.index, query.local.gid, query.local.netdev, query.remote};
  const auto now = now_();
  auto it = readings_.find(key);
  if (it != readings_.end() && now - it->second.at < kPathFactsTtl) return it->second.facts;
  if (readings_.size() > 1024) readings_.clear();  // a bound: pairs come and go
  Reading r{now, base().ReadPath(query)};
  auto& slot = readings_[key];
  slot = std::move(r);
  return slot.facts;
}

}  // namespace qpconnect::rdmacm
