// SPDX-License-Identifier: MIT
#include "sockaddr.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

namespace qpconnect::rdmacm {

std::string HostText(const sockaddr* addr) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (addr->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, buf, sizeof buf);
  else if (addr->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, buf, sizeof buf);
  std::string text = buf;
  if (uint32_t scope = ScopeOf(addr); scope != 0) {
    char name[IF_NAMESIZE] = "";
    text +=
        "%" + std::string(if_indextoname(scope, name) != nullptr ? name : std::to_string(scope));
  }
  return text;
}

uint32_t ScopeOf(const sockaddr* addr) {
  return addr->sa_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(addr)->sin6_scope_id
                                     : 0;
}

sockaddr_storage Unmapped(const sockaddr* addr) {
  sockaddr_storage out{};
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      auto* in = reinterpret_cast<sockaddr_in*>(&out);
      in->sin_family = AF_INET;
      in->sin_port = in6->sin6_port;
      std::memcpy(&in->sin_addr, &in6->sin6_addr.s6_addr[12], 4);
      return out;
    }
  }
  std::memcpy(&out, addr, AddressLength(addr));
  return out;
}

bool SameAddress(const sockaddr* a, const sockaddr* b) {
  const sockaddr_storage ua = Unmapped(a), ub = Unmapped(b);
  if (ua.ss_family != ub.ss_family) return false;
  if (ua.ss_family == AF_INET)
    return std::memcmp(&reinterpret_cast<const sockaddr_in*>(&ua)->sin_addr,
                       &reinterpret_cast<const sockaddr_in*>(&ub)->sin_addr, 4) == 0;
  if (ua.ss_family != AF_INET6) return false;
  const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&ua);
  const auto* b6 = reinterpret_cast<const sockaddr_in6*>(&ub);
  if (a6->sin6_scope_id != 0 && b6->sin6_scope_id != 0 && a6->sin6_scope_id != b6->sin6_scope_id)
    return false;
  return std::memcmp(&a6->sin6_addr, &b6->sin6_addr, 16) == 0;
}

bool ParseAddress(std::string_view text, sockaddr_storage& out) {
  std::string host(text);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return false;
  const bool ok = res->ai_family == AF_INET || res->ai_family == AF_INET6;
  if (ok) out = Unmapped(res->ai_addr);
  freeaddrinfo(res);
  return ok;
}

bool AddressGid(const sockaddr* addr, ibv_gid& gid) {
  std::memset(&gid, 0, sizeof gid);
  if (addr->sa_family == AF_INET) {
    gid.raw[10] = gid.raw[11] = 0xff;
    std::memcpy(&gid.raw[12], &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, 4);
    return true;
  }
  if (addr->sa_family == AF_INET6) {
    std::memcpy(gid.raw, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, 16);
    return true;
  }
  return false;
}

std::string AddressText(const sockaddr* addr) {
  std::string host = HostText(addr);
  std::string port = std::to_string(PortOf(addr));
  return addr->sa_family == AF_INET6 ? "[" + host + "]:" + port : host + ":" + port;
}

bool IsWildcard(const sockaddr* addr) {
  if (addr->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (addr->sa_family == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr);
  return false;
}

bool IsLoopback(const sockaddr* addr) {
  const sockaddr_storage plain = Unmapped(addr);
  const auto* a = reinterpret_cast<const sockaddr*>(&plain);
  if (a->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
  if (a->sa_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
  return false;
}

socklen_t AddressLength(const sockaddr* addr) {
  return addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

uint16_t PortOf(const sockaddr* addr) {
  if (addr->sa_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in*>(addr)->sin_port);
  if (addr->sa_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port);
  return 0;
}

void SetPort(sockaddr* addr, uint16_t port) {
  if (addr->sa_family == AF_INET) reinterpret_cast<sockaddr_in*>(addr)->sin_port = htons(port);
  if (addr->sa_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(addr)->sin6_port = htons(port);
}

}  // namespace qpconnect::rdmacm
