// SPDX-License-Identifier: MIT
// The GID table read again right before RTR (issue 31): the GID this side
// chose at the exchange must still be where it was. An address removed, a
// port flapped (the table rebuilt) or an entry moved to another index would
// otherwise be applied as an address vector naming a GID that no longer is
// this side's: a refused RTR (EINVAL, no reason given) or silent drops.
//
// Thread-safety: pure function. Part of qpconnect::core (no verbs).
#pragma once

#include <optional>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/endpoint.h"

namespace qpconnect {

// nullopt when `table` (the port's valid entries, read now) still holds
// `chosen` (same index, bytes and type); otherwise the error finding
// "gid-changed-before-rtr" (direction local; local_value the entry chosen
// at the exchange) whose message says what the table holds now: the same GID at another index,
// another GID at the index, or neither.
std::optional<Finding> CheckGidUnchanged(const GidEntry& chosen,
                                         const std::vector<GidEntry>& table);

}  // namespace qpconnect
