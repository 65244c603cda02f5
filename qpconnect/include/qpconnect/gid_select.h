// SPDX-License-Identifier: MIT
// Choosing the GID (source address) a side uses, from its port's GID table.
//
// On Ethernet (RoCE) ports the choice decides whether packets are routable at
// all; peers.md lists what goes wrong when it is made badly (link-local GIDs,
// RoCE v1 on one side, IPv4 vs IPv6). Pure logic: the caller supplies whether
// a GID's address is configured on its netdev.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"

namespace qpconnect {

struct GidPreference {
  std::optional<uint16_t> index;        // -g/--gid-idx: use exactly this entry
  GidFamily family = GidFamily::kIpv4;  // requested address family (RoCE)
};

// Picks the GID for a port with `link_layer` from its valid entries `table`.
//   - With preference.index: that entry, kNotFound if the table has no valid
//     entry there, kInvalidArgument above kMaxSgidIndex (255: an address
//     vector's sgid_index is 8 bits).
//   - Ethernet: among RoCE entries at indices 0..255, ordered by (address configured on the
//     netdev, RoCE v2 before v1, requested family, not link-local, lower
//     index). Link-local is used only when nothing else exists.
//   - InfiniBand: index 0 (the port GID), kNotFound if absent.
// `configured` may be empty (then every address counts as configured).
// kNotFound with the table summarised when nothing fits.
Result<GidEntry> SelectGid(const std::vector<GidEntry>& table, LinkLayer link_layer,
                           const GidPreference& preference,
                           const std::function<bool(const GidEntry&)>& configured = {});

}  // namespace qpconnect
