// SPDX-License-Identifier: MIT
// rdma_getaddrinfo's answer made from getaddrinfo's, as librdmacm makes it
// (rdma-core's addrinfo.c, read for its behaviour): the rdma_addrinfo hints
// turned into getaddrinfo's (RAI_PASSIVE -> AI_PASSIVE, RAI_NUMERICHOST ->
// AI_NUMERICHOST, the QP type -> the socket type, the port space -> the
// protocol), and a result into an rdma_addrinfo (the socket type -> the QP
// type and the protocol -> the port space unless the hints name them; the
// address as ai_src_addr for a passive result, ai_dst_addr otherwise; the
// hints' source address when the result has none).
//
// librdmacm returns only getaddrinfo's first result (ai_next stays NULL
// unless ibacm adds paths); rdma_getaddrinfo(3) describes a list, and this
// library returns the whole chain: the head is librdmacm's answer, the
// entries after it are getaddrinfo's other results in its order, less those
// that name no RDMA service (a SOCK_RAW result when the hints name no QP
// type) and those equal to an earlier entry.
//
// Every chain is freed with FreeAddrinfo (rdma_freeaddrinfo): each entry,
// its addresses and names are malloc'd. Thread-safety: pure functions
// (allocation only).
#pragma once

#include <netdb.h>
#include <rdma/rdma_cma.h>

#include <memory>

#include "qpconnect/result.h"

namespace qpconnect::rdmacm {

// Frees a chain (rdma_freeaddrinfo's body); nullptr is a no-op.
void FreeAddrinfo(rdma_addrinfo* chain) noexcept;
struct AddrinfoDeleter {
  void operator()(rdma_addrinfo* chain) const noexcept { FreeAddrinfo(chain); }
};
using UniqueAddrinfo = std::unique_ptr<rdma_addrinfo, AddrinfoDeleter>;

// getaddrinfo's hints for rdma_addrinfo `hints` (librdmacm's
// ucma_convert_to_ai).
addrinfo GetaddrinfoHints(const rdma_addrinfo& hints);

// The chain for getaddrinfo's results `found` (not empty) under `hints`.
// kIo (ENOMEM) if an allocation failed.
Result<UniqueAddrinfo> ChainFrom(const addrinfo& found, const rdma_addrinfo& hints);

// The one entry rdma_getaddrinfo makes with neither a node nor a service:
// the hints' flags, family, QP type, port space and addresses.
Result<UniqueAddrinfo> EntryFromHints(const rdma_addrinfo& hints);

// rdma_getaddrinfo over the system's getaddrinfo (`hints` may be null: its
// defaults): 0 and `res`, or getaddrinfo's EAI_* code (EAI_MEMORY for an
// allocation), as librdmacm returns it. REQUIRES: node or service set.
int ResolveChain(const char* node, const char* service, const rdma_addrinfo* hints,
                 UniqueAddrinfo& res);

}  // namespace qpconnect::rdmacm
