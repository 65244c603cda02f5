#include "qpconnect/verbs/netdev.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>

namespace qpconnect::verbs {

bool NetdevHasAddress(const std::string& netdev, const Gid& gid) {
  if (netdev.empty()) return true;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return true;
  bool found = false;
  bool v4 = IsIpv4MappedGid(gid);
  for (ifaddrs* ifa = list; ifa != nullptr && !found; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || netdev != ifa->ifa_name) continue;
    if (v4 && ifa->ifa_addr->sa_family == AF_INET) {
      sockaddr_in sin{};
      std::memcpy(&sin, ifa->ifa_addr, sizeof sin);
      found = std::memcmp(&sin.sin_addr, gid.data() + 12, 4) == 0;
    } else if (!v4 && ifa->ifa_addr->sa_family == AF_INET6) {
      sockaddr_in6 sin6{};
      std::memcpy(&sin6, ifa->ifa_addr, sizeof sin6);
      found = std::memcmp(&sin6.sin6_addr, gid.data(), 16) == 0;
    }
  }
  freeifaddrs(list);
  return found;
}

}  // namespace qpconnect::verbs
