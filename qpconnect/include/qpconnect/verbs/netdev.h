// Facts about the network device behind a RoCE GID.
#pragma once

#include <string>

#include "qpconnect/endpoint.h"

namespace qpconnect::verbs {

// True when `gid`'s address (the IPv4 of an IPv4-mapped GID, else the IPv6
// address) is configured on `netdev`. True when it cannot be told (no
// netdev name, getifaddrs failure), so callers never reject on ignorance.
bool NetdevHasAddress(const std::string& netdev, const Gid& gid);

}  // namespace qpconnect::verbs
