// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/netdev.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>

namespace qpconnect::verbs {

NetdevAddresses NetdevAddresses::Snapshot() {
  NetdevAddresses s;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return s;
  s.known_ = true;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_name == nullptr) continue;
    Address a;
    a.netdev = ifa->ifa_name;
    if (ifa->ifa_addr->sa_family == AF_INET) {
      sockaddr_in sin{};
      std::memcpy(&sin, ifa->ifa_addr, sizeof sin);
      a.v4 = true;
      std::memcpy(a.bytes.data(), &sin.sin_addr, 4);
    } else if (ifa->ifa_addr->sa_family == AF_INET6) {
      sockaddr_in6 sin6{};
      std::memcpy(&sin6, ifa->ifa_addr, sizeof sin6);
      std::memcpy(a.bytes.data(), &sin6.sin6_addr, 16);
    } else {
      continue;
    }
    s.addresses_.push_back(std::move(a));
  }
  freeifaddrs(list);
  return s;
}

bool NetdevAddresses::Has(const std::string& netdev, const Gid& gid) const {
  if (netdev.empty() || !known_) return true;
  const bool v4 = IsIpv4MappedGid(gid);
  for (const auto& a : addresses_) {
    if (a.netdev != netdev || a.v4 != v4) continue;
    if (v4 ? std::memcmp(a.bytes.data(), gid.data() + 12, 4) == 0
           : std::memcmp(a.bytes.data(), gid.data(), 16) == 0) {
      return true;
    }
  }
  return false;
}

bool NetdevHasAddress(const std::string& netdev, const Gid& gid) {
  return NetdevAddresses::Snapshot().Has(netdev, gid);
}

}  // namespace qpconnect::verbs
