// SPDX-License-Identifier: MIT
#include "addrinfo.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace qpconnect::rdmacm {
namespace {

Error NoMemory() { return Error(ErrorCode::kIo, ENOMEM, "rdma_getaddrinfo", "", "out of memory"); }

// A malloc'd copy of `len` bytes of `addr` (the program frees it with
// rdma_freeaddrinfo, as librdmacm's); false if the allocation failed.
bool CopyAddress(const sockaddr* addr, socklen_t len, sockaddr*& out, socklen_t& out_len) {
  out = static_cast<sockaddr*>(std::malloc(len));
  if (out == nullptr) return false;
  std::memcpy(out, addr, len);
  out_len = len;
  return true;
}

bool CopyName(const char* name, char*& out) {
  if (name == nullptr) return true;
  out = strdup(name);
  return out != nullptr;
}

// One result as librdmacm's ucma_convert_to_rai makes it, with the hints'
// source address when the result has none (rdma_getaddrinfo's).
bool Convert(const addrinfo& ai, const rdma_addrinfo& hints, rdma_addrinfo& rai) {
  if (hints.ai_qp_type != 0)
    rai.ai_qp_type = hints.ai_qp_type;
  else if (ai.ai_socktype == SOCK_STREAM)
    rai.ai_qp_type = IBV_QPT_RC;
  else if (ai.ai_socktype == SOCK_DGRAM)
    rai.ai_qp_type = IBV_QPT_UD;
  if (hints.ai_port_space != 0)
    rai.ai_port_space = hints.ai_port_space;
  else if (ai.ai_protocol == IPPROTO_TCP)
    rai.ai_port_space = RDMA_PS_TCP;
  else if (ai.ai_protocol == IPPROTO_UDP)
    rai.ai_port_space = RDMA_PS_UDP;
  rai.ai_family = ai.ai_family;
  if (ai.ai_flags & AI_PASSIVE) {
    rai.ai_flags = RAI_PASSIVE;
    if (!CopyName(ai.ai_canonname, rai.ai_src_canonname)) return false;
    if (!CopyAddress(ai.ai_addr, ai.ai_addrlen, rai.ai_src_addr, rai.ai_src_len)) return false;
  } else {
    if (!CopyName(ai.ai_canonname, rai.ai_dst_canonname)) return false;
    if (!CopyAddress(ai.ai_addr, ai.ai_addrlen, rai.ai_dst_addr, rai.ai_dst_len)) return false;
  }
  if (rai.ai_src_len == 0 && hints.ai_src_len != 0 && hints.ai_src_addr != nullptr)
    return CopyAddress(hints.ai_src_addr, hints.ai_src_len, rai.ai_src_addr, rai.ai_src_len);
  return true;
}

bool SameAddress(const sockaddr* a, socklen_t a_len, const sockaddr* b, socklen_t b_len) {
  if (a == nullptr || b == nullptr) return a == b;
  return a_len == b_len && std::memcmp(a, b, a_len) == 0;
}

bool SameEntry(const rdma_addrinfo& a, const rdma_addrinfo& b) {
  return a.ai_flags == b.ai_flags && a.ai_family == b.ai_family && a.ai_qp_type == b.ai_qp_type &&
         a.ai_port_space == b.ai_port_space &&
         SameAddress(a.ai_src_addr, a.ai_src_len, b.ai_src_addr, b.ai_src_len) &&
         SameAddress(a.ai_dst_addr, a.ai_dst_len, b.ai_dst_addr, b.ai_dst_len);
}

}  // namespace

void FreeAddrinfo(rdma_addrinfo* chain) noexcept {
  while (chain != nullptr) {
    rdma_addrinfo* next = chain->ai_next;
    std::free(chain->ai_src_addr);
    std::free(chain->ai_dst_addr);
    std::free(chain->ai_src_canonname);
    std::free(chain->ai_dst_canonname);
    std::free(chain->ai_route);
    std::free(chain->ai_connect);
    std::free(chain);
    chain = next;
  }
}

addrinfo GetaddrinfoHints(const rdma_addrinfo& hints) {
  addrinfo ai{};
  if (hints.ai_flags & RAI_PASSIVE) ai.ai_flags = AI_PASSIVE;
  if (hints.ai_flags & RAI_NUMERICHOST) ai.ai_flags |= AI_NUMERICHOST;
  if (hints.ai_family != AF_IB) ai.ai_family = hints.ai_family;
  switch (hints.ai_qp_type) {
    case IBV_QPT_RC:
    case IBV_QPT_UC:
    case IBV_QPT_XRC_SEND:
    case IBV_QPT_XRC_RECV:
      ai.ai_socktype = SOCK_STREAM;
      break;
    case IBV_QPT_UD:
      ai.ai_socktype = SOCK_DGRAM;
      break;
    default:
      break;
  }
  switch (hints.ai_port_space) {
    case RDMA_PS_TCP:
      ai.ai_protocol = IPPROTO_TCP;
      break;
    case RDMA_PS_IPOIB:
    case RDMA_PS_UDP:
      ai.ai_protocol = IPPROTO_UDP;
      break;
    case RDMA_PS_IB:
      if (ai.ai_socktype == SOCK_STREAM) ai.ai_protocol = IPPROTO_TCP;
      if (ai.ai_socktype == SOCK_DGRAM) ai.ai_protocol = IPPROTO_UDP;
      break;
    default:
      break;
  }
  return ai;
}

Result<UniqueAddrinfo> ChainFrom(const addrinfo& found, const rdma_addrinfo& hints) {
  UniqueAddrinfo head;
  rdma_addrinfo* tail = nullptr;
  for (const addrinfo* ai = &found; ai != nullptr; ai = ai->ai_next) {
    UniqueAddrinfo entry(static_cast<rdma_addrinfo*>(std::calloc(1, sizeof(rdma_addrinfo))));
    if (!entry || !Convert(*ai, hints, *entry)) return NoMemory();
    if (head) {                              // the head is librdmacm's answer, whatever it is
      if (entry->ai_qp_type == 0) continue;  // no RDMA service (SOCK_RAW)
      bool repeat = false;
      for (const rdma_addrinfo* e = head.get(); e != nullptr && !repeat; e = e->ai_next)
        repeat = SameEntry(*e, *entry);
      if (repeat) continue;
    }
    rdma_addrinfo* raw = entry.release();
    if (tail == nullptr)
      head.reset(raw);
    else
      tail->ai_next = raw;
    tail = raw;
  }
  return head;
}

Result<UniqueAddrinfo> EntryFromHints(const rdma_addrinfo& hints) {
  UniqueAddrinfo rai(static_cast<rdma_addrinfo*>(std::calloc(1, sizeof(rdma_addrinfo))));
  if (!rai) return NoMemory();
  rai->ai_flags = hints.ai_flags;
  rai->ai_family = hints.ai_family;
  rai->ai_qp_type = hints.ai_qp_type;
  rai->ai_port_space = hints.ai_port_space;
  if (hints.ai_dst_len != 0 && hints.ai_dst_addr != nullptr &&
      !CopyAddress(hints.ai_dst_addr, hints.ai_dst_len, rai->ai_dst_addr, rai->ai_dst_len))
    return NoMemory();
  if (hints.ai_src_len != 0 && hints.ai_src_addr != nullptr &&
      !CopyAddress(hints.ai_src_addr, hints.ai_src_len, rai->ai_src_addr, rai->ai_src_len))
    return NoMemory();
  return rai;
}

int ResolveChain(const char* node, const char* service, const rdma_addrinfo* hints,
                 UniqueAddrinfo& res) {
  // No hints: getaddrinfo's own defaults (AI_V4MAPPED | AI_ADDRCONFIG, every
  // socket type), as librdmacm passes NULL on.
  static const rdma_addrinfo kNoHints{};
  addrinfo want{};
  if (hints != nullptr) want = GetaddrinfoHints(*hints);
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(node, service, hints != nullptr ? &want : nullptr, &found); rc != 0)
    return rc;
  auto chain = ChainFrom(*found, hints != nullptr ? *hints : kNoHints);
  freeaddrinfo(found);
  if (!chain) return EAI_MEMORY;
  res = std::move(*chain);
  return 0;
}

}  // namespace qpconnect::rdmacm
