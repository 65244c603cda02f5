// SPDX-License-Identifier: MIT
#include "ports.h"

#include <netinet/in.h>

#include <cerrno>
#include <fstream>

#include "sockaddr.h"

namespace qpconnect::rdmacm {
namespace {

bool BindV6OnlyDefault() {
  static const bool v6only = [] {
    std::ifstream f("/proc/sys/net/ipv6/bindv6only");
    int v = 0;
    return static_cast<bool>(f >> v) && v != 0;
  }();
  return v6only;
}

}  // namespace

int PortConflict(const PortUser& id, const std::vector<PortUser>& others, bool reuseaddr,
                 size_t* with) {
  for (size_t i = 0; i < others.size(); ++i) {
    const PortUser& other = others[i];
    if (other.addr == id.addr || PortOf(other.addr) != PortOf(id.addr)) continue;
    if (reuseaddr && other.reuseaddr && !other.listening) continue;
    if (id.afonly && other.afonly && id.addr->sa_family != other.addr->sa_family) continue;
    int err = 0;
    if (IsWildcard(id.addr) || IsWildcard(other.addr)) {
      err = EADDRNOTAVAIL;
    } else if (SameAddress(id.addr, other.addr)) {
      err = EADDRINUSE;
    } else {
      continue;
    }
    if (with != nullptr) *with = i;
    return err;
  }
  return 0;
}

bool EffectiveAfOnly(int family, std::optional<bool> option) {
  if (option) return *option;
  return family == AF_INET6 ? BindV6OnlyDefault() : true;
}

int ListenerMatch(const sockaddr* bound, bool afonly, const sockaddr* local) {
  if (PortOf(bound) != PortOf(local)) return 0;
  const sockaddr_storage unmapped = Unmapped(local);
  const int family = unmapped.ss_family;
  if (IsWildcard(bound)) {
    if (bound->sa_family == family) return 1;
    // An IPv6 wildcard that is not AF-only takes IPv4 requests too.
    return bound->sa_family == AF_INET6 && family == AF_INET && !afonly ? 1 : 0;
  }
  return SameAddress(bound, local) ? 2 : 0;
}

Unmatched WhenNoListenerTakes(const std::vector<const sockaddr*>& listening,
                              const sockaddr* local) {
  for (const sockaddr* bound : listening)
    if (PortOf(bound) == PortOf(local)) return Unmatched::kRefuseNow;
  return Unmatched::kWaitForListener;
}

bool HoldsIpv4ForRefusal(const sockaddr* bound, bool afonly) {
  return afonly && bound->sa_family == AF_INET6 && IsWildcard(bound);
}

}  // namespace qpconnect::rdmacm
