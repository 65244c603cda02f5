// SPDX-License-Identifier: MIT
#include "qpconnect/observe/cm_id.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

namespace qpconnect {
namespace {

// AF_IB of the kernel (include/linux/socket.h); <sys/socket.h> may lack it.
constexpr sa_family_t kAfIb = 27;
// struct sockaddr_ib (include/rdma/ib.h): family (2), pkey (2), flowinfo (4),
// then the 16-byte GID.
constexpr size_t kSibAddrOffset = 8;

}  // namespace

std::string SockaddrText(const void* data, size_t len) {
  sa_family_t family = 0;
  if (len < sizeof family) return "";
  std::memcpy(&family, data, sizeof family);
  char text[INET6_ADDRSTRLEN] = {};
  if (family == AF_INET && len >= sizeof(sockaddr_in)) {
    sockaddr_in sin;
    std::memcpy(&sin, data, sizeof sin);
    if (inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text) == nullptr) return "";
    return std::string(text) + ":" + std::to_string(ntohs(sin.sin_port));
  }
  if (family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 sin6;
    std::memcpy(&sin6, data, sizeof sin6);
    if (inet_ntop(AF_INET6, &sin6.sin6_addr, text, sizeof text) == nullptr) return "";
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(sin6.sin6_port));
  }
  if (family == kAfIb && len >= kSibAddrOffset + 16) {
    Gid gid;
    std::memcpy(gid.data(), static_cast<const uint8_t*>(data) + kSibAddrOffset, gid.size());
    return "[" + GidToString(gid) + "]";
  }
  return "";
}

std::optional<Gid> GidOfAddressText(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) return std::nullopt;
    return GidFromString(text.substr(1, close - 1));
  }
  // "a.b.c.d:port" or "a.b.c.d"
  const std::string address = text.substr(0, text.find(':'));
  in_addr v4;
  if (inet_pton(AF_INET, address.c_str(), &v4) != 1) return std::nullopt;
  return GidFromString("::ffff:" + address);
}

std::optional<Gid> DestinationGidOfCmId(const std::string& src_addr, const std::string& dst_addr,
                                        std::span<const Gid> own_gids) {
  const std::optional<Gid> src = GidOfAddressText(src_addr);
  if (!src || std::find(own_gids.begin(), own_gids.end(), *src) == own_gids.end()) {
    return std::nullopt;
  }
  std::optional<Gid> dst = GidOfAddressText(dst_addr);
  if (dst && IsZeroGid(*dst)) return std::nullopt;
  return dst;
}

void AttachCmIds(const std::vector<KernelCmId>& cm_ids, std::span<KernelQp> qps) {
  if (cm_ids.empty()) return;
  std::map<std::pair<std::string, uint32_t>, std::vector<const KernelCmId*>> by_qp;
  for (const KernelCmId& c : cm_ids) {
    if (c.lqpn != 0 && !c.dst_addr.empty()) by_qp[{c.device, c.lqpn}].push_back(&c);
  }
  for (KernelQp& q : qps) {
    auto it = by_qp.find({q.device, q.lqpn});
    if (it == by_qp.end()) continue;
    const KernelCmId* chosen = it->second.front();
    for (const KernelCmId* c : it->second) {
      if (c->pid == q.pid) {
        chosen = c;
        break;
      }
    }
    q.src_addr = chosen->src_addr;
    q.dst_addr = chosen->dst_addr;
  }
}

}  // namespace qpconnect
