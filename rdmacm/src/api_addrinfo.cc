// SPDX-License-Identifier: MIT
// librdmacm's address resolution entry points: rdma_getaddrinfo and
// rdma_freeaddrinfo (RDMACM_1.0), and the asynchronous form over the same
// resolution, rdma_resolve_addrinfo and rdma_query_addrinfo (RDMACM_1.4;
// their man pages, and rdma-core's behaviour since v60: the names are
// resolved in the call, their result announced by an
// RDMA_CM_EVENT_ADDRINFO_RESOLVED event and taken by rdma_query_addrinfo;
// newer_calls.h). The chain itself is addrinfo.h's.
// An InfiniBand SA lookup (RAI_SA) is not offered: ENOSYS, one log line.
#include <netdb.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <string>

#include "addrinfo.h"
#include "log.h"
#include "newer_calls.h"
#include "rdma_cma_newer.h"
#include "state.h"
#include "sync.h"

using namespace qpconnect::rdmacm;  // NOLINT: the entry points are in the global namespace

namespace {

// rdma_getaddrinfo's work: 0 and `res`; getaddrinfo's EAI_* code (as
// librdmacm returns it); or -1 with errno, logged (`call` names the entry
// point).
int Resolve(const char* call, const char* node, const char* service, const rdma_addrinfo* hints,
            UniqueAddrinfo& res) {
  if (node == nullptr && service == nullptr && hints == nullptr)
    return Fail(EINVAL, std::string(call) + ": neither a node, a service nor hints");
  if (hints != nullptr && hints->ai_family == AF_IB)
    return Fail(ENOSYS, std::string(call) + ": AF_IB is not supported");
  if (hints != nullptr && (hints->ai_flags & RAI_SA)) {
    if (node != nullptr || (hints->ai_flags & RAI_DNS))  // as librdmacm: a contradiction
      return Fail(EOPNOTSUPP,
                  std::string(call) + ": RAI_SA takes a service only, without RAI_DNS or a node");
    return Fail(ENOSYS,
                std::string(call) +
                    ": RAI_SA (a service lookup in the InfiniBand SA) is not supported "
                    "by the qpconnect rdma_cm library (no SA is asked); see docs/rdmacm.md");
  }
  if (node != nullptr || service != nullptr) return ResolveChain(node, service, hints, res);
  auto entry = EntryFromHints(*hints);
  if (!entry) return Fail(ENOMEM, std::string(call) + ": " + entry.error().ToString());
  res = std::move(*entry);
  return 0;
}

// The errno for getaddrinfo's EAI_* code (librdmacm sets errno to the
// negative code itself).
int ErrnoOfEai(int eai) {
  switch (eai) {
    case EAI_SYSTEM:
      return errno != 0 ? errno : EIO;
    case EAI_MEMORY:
      return ENOMEM;
    case EAI_AGAIN:
      return EAGAIN;
    case EAI_BADFLAGS:
    case EAI_FAMILY:
    case EAI_SOCKTYPE:
    case EAI_SERVICE:
      return EINVAL;
    case EAI_FAIL:
      return EIO;
    default:  // EAI_NONAME, EAI_NODATA, EAI_ADDRFAMILY: the name has no such address
      return ENXIO;
  }
}

std::string Named(const char* node, const char* service) {
  return std::string(node != nullptr ? node : "(no node)") + " " +
         (service != nullptr ? service : "(no service)");
}

}  // namespace

extern "C" {

int rdma_getaddrinfo(const char* node, const char* service, const rdma_addrinfo* hints,
                     rdma_addrinfo** res) {
  if (res == nullptr) return Fail(EINVAL, "rdma_getaddrinfo: no place for the result");
  UniqueAddrinfo chain;
  if (int rc = Resolve("rdma_getaddrinfo", node, service, hints, chain); rc != 0) return rc;
  *res = chain.release();
  return 0;
}

void rdma_freeaddrinfo(rdma_addrinfo* res) { FreeAddrinfo(res); }

int rdma_resolve_addrinfo(rdma_cm_id* cm_id, const char* node, const char* service,
                          const rdma_addrinfo* hints) {
  uint32_t handle = 0;
  {
    LibraryLock lock;
    Id* id = IdOf(cm_id);
    if (id == nullptr || StartAddrinfo(id) != 0) return -1;
    handle = id->handle;
  }
  // Resolved without the lock (a DNS query may take seconds).
  UniqueAddrinfo chain;
  errno = 0;
  const int rc = Resolve("rdma_resolve_addrinfo", node, service, hints, chain);
  const int err = errno;
  LibraryLock lock;
  Id* id = FindId(handle);
  if (id == nullptr) return Fail(EINVAL, "rdma_resolve_addrinfo: the id was destroyed meanwhile");
  EndAddrinfo(id, std::move(chain));     // a failure ends it without an event
  if (rc == -1) return errno = err, -1;  // Resolve logged why
  if (rc != 0) {
    errno = err;
    return Fail(ErrnoOfEai(rc), "rdma_resolve_addrinfo: " + Named(node, service) + ": " +
                                    gai_strerror(rc) + " (no event follows)");
  }
  if (!IsSync(id)) return 0;
  // A synchronous id's call returns with its event, as librdmacm's.
  lock.unlock();
  return Complete(id);
}

int rdma_query_addrinfo(rdma_cm_id* cm_id, rdma_addrinfo** info) {
  if (info == nullptr) return Fail(EINVAL, "rdma_query_addrinfo: no place for the result");
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return TakeAddrinfo(id, info);
}

}  // extern "C"
