// SPDX-License-Identifier: MIT
// What a newer rdma-core's <rdma/rdma_cma.h> and <rdma/rsocket.h> declare
// and Debian 12's (rdma-core 44, which the build has) do not: the entry
// points of librdmacm.map's RDMACM_1.4 (rdma-core v60) and RDMACM_1.5, the
// event types and rdma_addrinfo flags they use, and the event's `arg`.
// Written from the man pages (rdma_resolve_addrinfo(3),
// rdma_query_addrinfo(3), rdma_write_cm_event(3)) and the newer header's
// ABI: the same names, types and values, so that a program built against
// that header binds to these (librdmacm.map) and means the same.
//
// The newer event types lie past the last value Debian's enum
// rdma_cm_event_type declares (RDMA_CM_EVENT_TIMEWAIT_EXIT, 15), so in C++
// they are not values of that type: the library keeps event types as int
// (events.h's EventCode) and never loads one as the enum.
//
// Thread-safety: declarations and constants.
#pragma once

#include <rdma/rdma_cma.h>
#include <sys/epoll.h>

#include <cstdint>
#include <cstring>

namespace qpconnect::rdmacm {

// enum rdma_cm_event_type after RDMA_CM_EVENT_TIMEWAIT_EXIT, as rdma-core
// v60's header numbers them.
inline constexpr int kEventAddrinfoResolved = 16;  // RDMA_CM_EVENT_ADDRINFO_RESOLVED
inline constexpr int kEventAddrinfoError = 17;     // RDMA_CM_EVENT_ADDRINFO_ERROR
inline constexpr int kEventUser = 18;              // RDMA_CM_EVENT_USER
inline constexpr int kEventInternal = 19;          // RDMA_CM_EVENT_INTERNAL (librdmacm's own)

static_assert(sizeof(rdma_cm_event_type) == sizeof(int), "an event type is an int in the ABI");
static_assert(RDMA_CM_EVENT_TIMEWAIT_EXIT == 15, "the header's event types changed");

// The int an event type holds, without loading it as the enum (a value
// past Debian's enum is not one in C++).
inline int EventCodeOf(const rdma_cm_event_type& type) {
  int code = 0;
  std::memcpy(&code, &type, sizeof code);
  return code;
}

}  // namespace qpconnect::rdmacm

// rdma_addrinfo.ai_flags: resolve through the InfiniBand SA, or through DNS
// (mutually exclusive; neither: DNS).
#ifndef RAI_SA
#define RAI_SA 0x00000010
#endif
#ifndef RAI_DNS
#define RAI_DNS 0x00000020
#endif

extern "C" {

// RDMACM_1.4. The event of a written event carries `arg` where the newer
// header's union rdma_cm_event.param has `uint64_t arg` (its first 8 bytes).
int rdma_resolve_addrinfo(rdma_cm_id* id, const char* node, const char* service,
                          const rdma_addrinfo* hints);
int rdma_query_addrinfo(rdma_cm_id* id, rdma_addrinfo** info);
int rdma_write_cm_event(rdma_cm_id* id, rdma_cm_event_type event, int status, uint64_t arg);

// RDMACM_1.5: epoll for rsockets.
int repoll_create(int flags);
int repoll_ctl(int epfd, int op, int fd, epoll_event* event);
int repoll_wait(int epfd, epoll_event* events, int maxevents, int timeout);

}  // extern "C"
