// SPDX-License-Identifier: MIT
// The id-level half of librdmacm's RDMACM_1.4 (rdma_resolve_addrinfo(3),
// rdma_query_addrinfo(3), rdma_write_cm_event(3)), as rdma-core's cma.c
// has it: one resolution per id at a time, its result announced by an
// RDMA_CM_EVENT_ADDRINFO_RESOLVED event and taken once; a program's own
// RDMA_CM_EVENT_USER event with its status and value. The entry points
// (api_addrinfo.cc, api_id.cc) resolve names (addrinfo.h) and call these.
//
// Each returns 0, or -1 with errno set and one log line naming the call.
// Thread-safety: every function REQUIRES library_mutex (lock.h).
#pragma once

#include <cstdint>

#include "addrinfo.h"
#include "lock.h"
#include "state.h"

namespace qpconnect::rdmacm {

// rdma_resolve_addrinfo's start: EBUSY while the id's last resolution is
// not taken yet (rdma_query_addrinfo); otherwise the id is resolving.
int StartAddrinfo(Id* id) QPCM_REQUIRES(library_mutex);
// Its end: `chain` kept for rdma_query_addrinfo and an
// RDMA_CM_EVENT_ADDRINFO_RESOLVED event (status 0) posted on the id's
// channel; a null `chain` (the resolution failed, no event) ends it.
void EndAddrinfo(Id* id, UniqueAddrinfo chain) QPCM_REQUIRES(library_mutex);
// rdma_query_addrinfo: the resolved chain, handed to the program (freed with
// rdma_freeaddrinfo) and no longer the id's. ENOENT before one is resolved
// or once taken.
int TakeAddrinfo(Id* id, rdma_addrinfo** info) QPCM_REQUIRES(library_mutex);
// rdma_write_cm_event: an event of `type` with `status` and param.arg `arg`
// on the id's channel. EINVAL for any type but RDMA_CM_EVENT_USER.
int WriteUserEvent(Id* id, int type, int status, uint64_t arg) QPCM_REQUIRES(library_mutex);

}  // namespace qpconnect::rdmacm
