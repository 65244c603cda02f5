// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/netdev_addresses.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace qpconnect::verbs {
namespace {

// The number of leading one bits of a netmask of `n` bytes.
uint8_t MaskBits(const uint8_t* mask, size_t n) {
  int bits = 0;
  for (size_t i = 0; i < n; ++i) bits += std::popcount(mask[i]);
  return static_cast<uint8_t>(bits);
}

}  // namespace

std::vector<AddressPrefix> ReadNetdevAddresses(const std::vector<std::string>& names) {
  std::vector<AddressPrefix> out;
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return out;
  for (const ifaddrs* i = all; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_netmask == nullptr || i->ifa_name == nullptr) continue;
    if (!names.empty() && std::find(names.begin(), names.end(), i->ifa_name) == names.end()) {
      continue;
    }
    AddressPrefix a;
    a.netdev = i->ifa_name;
    if (i->ifa_addr->sa_family == AF_INET) {
      a.address[10] = a.address[11] = 0xff;
      std::memcpy(&a.address[12], &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, 4);
      a.prefix_len = MaskBits(reinterpret_cast<const uint8_t*>(
                                  &reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr),
                              4);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      std::memcpy(a.address.data(), &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr,
                  16);
      a.prefix_len =
          MaskBits(reinterpret_cast<const uint8_t*>(
                       &reinterpret_cast<const sockaddr_in6*>(i->ifa_netmask)->sin6_addr),
                   16);
    } else {
      continue;
    }
    out.push_back(std::move(a));
  }
  freeifaddrs(all);
  return out;
}

}  // namespace qpconnect::verbs
