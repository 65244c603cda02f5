// SPDX-License-Identifier: MIT
// Event channels and the events posted on them.
//
// A channel's fd is an eventfd in semaphore mode: each posted event adds one,
// each rdma_get_cm_event() reads one, so the fd is readable exactly while
// events wait (poll/epoll work on it, and O_NONBLOCK set by the program makes
// rdma_get_cm_event() fail with EAGAIN, as librdmacm's does).
//
// Thread-safety: PostEvent, MoveEvents and DropEvents REQUIRE library_mutex
// held (they take the channel's `mu` too); TakeEvent, and AckEvent for an
// event it held, take only the channel's `mu` (or nothing), so that a
// program's event thread never waits for the library's lock (lock.h; clang
// checks what is annotated).
#pragma once

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "rdma_cma_newer.h"
#include "state.h"

namespace qpconnect::rdmacm {

// A new channel; nullptr with errno set if no eventfd could be made.
Channel* NewChannel(bool private_to_id);
// Closes the fd and frees every queued event. REQUIRES: library_mutex held.
void FreeChannel(Channel* channel) QPCM_REQUIRES(library_mutex);

struct EventSpec {
  // An rdma_cm_event_type, or one of a newer header's (rdma_cma_newer.h's
  // kEvent*): kept as int, written into the event as its bytes.
  int type = RDMA_CM_EVENT_ADDR_RESOLVED;
  int status = 0;
  Id* listen = nullptr;           // CONNECT_REQUEST: the listening id
  std::string_view private_data;  // copied into the event
  // The private_data_len the program sees: the IB CM message's whole private
  // data area (zero-padded), as rdma_cm reports it; 0 when there is none.
  uint8_t private_space = 0;
  bool ud = false;  // param.ud instead of param.conn
  // param.conn's depths, retry counts, srq, qp_num: zero unless the event
  // carries them (CONNECT_REQUEST, CONNECT_RESPONSE, the active ESTABLISHED).
  ConnParams conn = {0, 0, 0, 0, 0, 0, 0};
  ibv_ah_attr ah{};  // param.ud
  // A multicast event's param.ud.private_data: the program's context
  // pointer itself (rdma_join_multicast's), with private_data_len 0.
  std::optional<const void*> ud_context;
  uint32_t qp_num = 0;
  uint32_t qkey = 0;
  // rdma_write_cm_event's value: param.arg (the newer header's; the first 8
  // bytes of param), instead of param.conn or param.ud.
  std::optional<uint64_t> arg;
};

// The type of a posted event as an int (rdma_cma_newer.h's EventCodeOf):
// an RDMA_CM_EVENT_* or a newer kEvent*.
inline int EventCode(const rdma_cm_event& ev) { return EventCodeOf(ev.event); }
// rdma_event_str's text for an event type: "RDMA_CM_EVENT_ESTABLISHED", ...,
// "RDMA_CM_EVENT_ADDRINFO_RESOLVED"; as librdmacm's, "UNKNOWN EVENT" for any
// other (RDMA_CM_EVENT_USER among them).
const char* EventName(int code);

// Queues an event for `id` on its channel and wakes the channel's fd.
void PostEvent(Id* id, const EventSpec& spec) QPCM_REQUIRES(library_mutex);
// Moves `id`'s queued events to `to` (rdma_migrate_id).
void MoveEvents(Id* id, Channel* from, Channel* to) QPCM_REQUIRES(library_mutex);
// Frees `id`'s events still queued on its channel (rdma_destroy_id).
void DropEvents(Id* id) QPCM_REQUIRES(library_mutex);
// The same, with `channel->mu` held by the caller.
void DropEventsLocked(Channel* channel, Id* id) QPCM_REQUIRES(channel->mu);

// rdma_get_cm_event: waits (unless the fd is O_NONBLOCK: -1, EAGAIN) for the
// next event on `channel`. 0 and *out set, or -1 with errno. With `hold`, the
// event counts as unacked on its id (the listener for CONNECT_REQUEST) until
// AckEvent, which rdma_destroy_id waits for.
int TakeEvent(Channel* channel, rdma_cm_event** out, bool hold = false) QPCM_EXCLUDES(channel->mu);
// rdma_ack_cm_event: frees the event and releases the id it held (no lock
// needed). An event nobody holds (a synchronous id's): REQUIRES library_mutex
// held.
void AckEvent(Event* event);
// Frees an event nobody holds (queued, or kept by a synchronous id).
void FreeEvent(Event* event);

}  // namespace qpconnect::rdmacm
