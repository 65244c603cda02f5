// SPDX-License-Identifier: MIT
// Facts about the network device behind a RoCE GID.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"

namespace qpconnect::verbs {

// The addresses configured on the host's network devices, read once
// (getifaddrs(), one netlink dump) and then asked about any number of GIDs:
// GID selection asks about every RoCE GID of a port, and under the lab's
// emulation each dump costs 3-5 ms.
class NetdevAddresses {
 public:
  // The addresses now. A getifaddrs() failure gives a snapshot that knows
  // nothing (Has() is then always true).
  static NetdevAddresses Snapshot();

  // True when `gid`'s address (the IPv4 of an IPv4-mapped GID, else the IPv6
  // address) is configured on `netdev`. True when it cannot be told (no
  // netdev name, a failed snapshot), so callers never reject on ignorance.
  bool Has(const std::string& netdev, const Gid& gid) const;

 private:
  struct Address {
    std::string netdev;
    bool v4 = false;
    std::array<uint8_t, 16> bytes{};  // IPv4: the first 4
  };
  bool known_ = false;
  std::vector<Address> addresses_;
};

// NetdevAddresses::Snapshot().Has(netdev, gid): for one question.
bool NetdevHasAddress(const std::string& netdev, const Gid& gid);

}  // namespace qpconnect::verbs
