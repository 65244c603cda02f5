// SPDX-License-Identifier: MIT
#include "qpconnect/gid_recheck.h"

#include <string>

#include "qpconnect/gid_pair.h"

namespace qpconnect {

std::optional<Finding> CheckGidUnchanged(const GidEntry& chosen,
                                         const std::vector<GidEntry>& table) {
  const GidEntry* at_index = nullptr;
  const GidEntry* moved = nullptr;
  for (const auto& g : table) {
    if (g.index == chosen.index) at_index = &g;
    if (g.gid == chosen.gid && g.type == chosen.type && g.index != chosen.index) moved = &g;
  }
  if (at_index != nullptr && at_index->gid == chosen.gid && at_index->type == chosen.type) {
    return std::nullopt;
  }
  Finding f;
  f.id = "gid-changed-before-rtr";
  f.severity = Severity::kError;
  f.transports = kAllTransports;
  f.attribute = "sgid_index";
  f.direction = Direction::kLocal;
  f.local_value = GidEntryLabel(chosen);
  std::string now;
  if (moved != nullptr) {
    now = "the GID moved to index " + std::to_string(moved->index);
  } else if (at_index != nullptr) {
    now = "index " + std::to_string(chosen.index) + " now holds " + GidEntryLabel(*at_index);
  } else {
    now = "the GID is gone from the table (its address removed, or the port went down)";
  }
  f.message = "the GID chosen at the exchange, " + GidEntryLabel(chosen) +
              ", changed before RTR: " + now + "; nothing was modified";
  f.fix =
      "connect again (both sides choose from the tables as they are then); check who "
      "changes the netdev's addresses (ip monitor address)";
  return f;
}

}  // namespace qpconnect
