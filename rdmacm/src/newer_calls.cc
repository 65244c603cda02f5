// SPDX-License-Identifier: MIT
#include "newer_calls.h"

#include <cerrno>
#include <string>
#include <utility>

#include "events.h"
#include "log.h"
#include "rdma_cma_newer.h"

namespace qpconnect::rdmacm {
int StartAddrinfo(Id* id) {
  if (id->resolving_ai)
    return Fail(EBUSY,
                "rdma_resolve_addrinfo: this id's last resolution is not taken yet "
                "(rdma_query_addrinfo)");
  id->resolving_ai = true;
  return 0;
}

void EndAddrinfo(Id* id, UniqueAddrinfo chain) {
  if (!chain) {
    id->resolving_ai = false;
    return;
  }
  id->resolved_ai = std::move(chain);
  EventSpec spec;
  spec.type = kEventAddrinfoResolved;
  PostEvent(id, spec);
}

int TakeAddrinfo(Id* id, rdma_addrinfo** info) {
  if (!id->resolving_ai || !id->resolved_ai)
    return Fail(ENOENT,
                "rdma_query_addrinfo: the id has no resolved address information "
                "(rdma_resolve_addrinfo first; each result is taken once)");
  *info = id->resolved_ai.release();
  id->resolving_ai = false;
  return 0;
}

int WriteUserEvent(Id* id, int type, int status, uint64_t arg) {
  if (type != kEventUser)
    return Fail(EINVAL, "rdma_write_cm_event: event " + std::to_string(type) +
                            " is not RDMA_CM_EVENT_USER (" + std::to_string(kEventUser) +
                            "), the one a program may write");
  EventSpec spec;
  spec.type = kEventUser;
  spec.status = status;
  spec.arg = arg;
  PostEvent(id, spec);
  return 0;
}

}  // namespace qpconnect::rdmacm
