// SPDX-License-Identifier: MIT
#include "events.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace qpconnect::rdmacm {

Channel* NewChannel(bool private_to_id) {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  if (fd < 0) return nullptr;
  auto* channel = new Channel{};
  channel->pub.fd = fd;
  channel->magic = kChannelMagic;
  channel->private_to_id = private_to_id;
  return channel;
}

void FreeChannel(Channel* channel) {
  {
    MutexGuard guard(channel->mu);
    for (Event* e : channel->queue) FreeEvent(e);
    channel->queue.clear();
  }
  close(channel->pub.fd);
  channel->magic = 0;
  delete channel;
}

void PostEvent(Id* id, const EventSpec& spec) {
  auto* channel = reinterpret_cast<Channel*>(id->pub.channel);
  if (channel == nullptr) return;
  auto* e = new Event{};
  e->magic = kEventMagic;
  e->handle = id->handle;
  e->ev.id = &id->pub;
  e->ev.listen_id = spec.listen != nullptr ? &spec.listen->pub : nullptr;
  std::memcpy(&e->ev.event, &spec.type, sizeof spec.type);  // maybe past Debian's enum
  e->ev.status = spec.status;
  size_t n = std::min(spec.private_data.size(), sizeof e->data);
  std::memcpy(e->data, spec.private_data.data(), n);
  uint8_t len = spec.private_space != 0 ? spec.private_space : static_cast<uint8_t>(n);
  const void* pdata = len != 0 ? e->data : nullptr;
  if (spec.arg) {
    std::memcpy(&e->ev.param, &*spec.arg, sizeof *spec.arg);
  } else if (spec.ud) {
    e->ev.param.ud.private_data = spec.ud_context ? *spec.ud_context : pdata;
    e->ev.param.ud.private_data_len = spec.ud_context ? 0 : len;
    e->ev.param.ud.ah_attr = spec.ah;
    e->ev.param.ud.qp_num = spec.qp_num;
    e->ev.param.ud.qkey = spec.qkey;
  } else {
    auto& c = e->ev.param.conn;
    c.private_data = pdata;
    c.private_data_len = len;
    c.responder_resources = spec.conn.responder_resources;
    c.initiator_depth = spec.conn.initiator_depth;
    c.flow_control = spec.conn.flow_control;
    c.retry_count = spec.conn.retry_count;
    c.rnr_retry_count = spec.conn.rnr_retry_count;
    c.srq = spec.conn.srq;
    c.qp_num = spec.conn.qp_num;
  }
  {
    MutexGuard guard(channel->mu);
    channel->queue.push_back(e);
  }
  uint64_t one = 1;
  (void)!write(channel->pub.fd, &one, sizeof one);
}

void MoveEvents(Id* id, Channel* from, Channel* to) {
  if (from == nullptr || to == nullptr || from == to) return;
  // Two channel locks in no fixed order cannot deadlock: every caller holds
  // library_mutex, and rdma_get_cm_event takes one channel's alone.
  MutexGuard from_guard(from->mu);
  MutexGuard to_guard(to->mu);
  auto& q = from->queue;
  for (auto it = q.begin(); it != q.end();) {
    if ((*it)->ev.id == &id->pub) {
      to->queue.push_back(*it);
      uint64_t one = 1;
      (void)!write(to->pub.fd, &one, sizeof one);
      it = q.erase(it);  // `from`'s count stays one high: TakeEvent skips
    } else {
      ++it;
    }
  }
}

void DropEvents(Id* id) {
  auto* channel = reinterpret_cast<Channel*>(id->pub.channel);
  if (channel == nullptr) return;
  MutexGuard guard(channel->mu);
  DropEventsLocked(channel, id);
}

void DropEventsLocked(Channel* channel, Id* id) {
  auto& q = channel->queue;
  for (auto it = q.begin(); it != q.end();) {
    if ((*it)->ev.id == &id->pub || (*it)->ev.listen_id == &id->pub) {
      FreeEvent(*it);
      it = q.erase(it);
    } else {
      ++it;
    }
  }
}

int TakeEvent(Channel* channel, rdma_cm_event** out, bool hold) {
  for (;;) {
    uint64_t v = 0;
    ssize_t n = read(channel->pub.fd, &v, sizeof v);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;  // EAGAIN when the program set O_NONBLOCK
    }
    MutexGuard guard(channel->mu);
    if (channel->queue.empty()) continue;  // an event moved or dropped after it was counted
    Event* e = channel->queue.front();
    channel->queue.pop_front();
    if (hold) {
      // A queued event's ids are alive: rdma_destroy_id drops it under `mu`
      // first, and then waits for what was raised here.
      rdma_cm_id* holder =
          EventCode(e->ev) == RDMA_CM_EVENT_CONNECT_REQUEST && e->ev.listen_id != nullptr
              ? e->ev.listen_id
              : e->ev.id;
      e->holder = reinterpret_cast<Id*>(holder);
      e->holder->unacked.fetch_add(1);
    }
    *out = &e->ev;
    return 0;
  }
}

void AckEvent(Event* event) {
  Id* holder = event->holder;
  FreeEvent(event);
  // The id may be freed once the count is zero: nothing of it is touched
  // after. A destroy waiting for it polls as well, so a notify that comes
  // between its check and its wait costs it one poll period at most.
  if (holder != nullptr && holder->unacked.fetch_sub(1) == 1) AckedCv().notify_all();
}

const char* EventName(int code) {
  switch (code) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      return "RDMA_CM_EVENT_ADDR_RESOLVED";
    case RDMA_CM_EVENT_ADDR_ERROR:
      return "RDMA_CM_EVENT_ADDR_ERROR";
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      return "RDMA_CM_EVENT_ROUTE_RESOLVED";
    case RDMA_CM_EVENT_ROUTE_ERROR:
      return "RDMA_CM_EVENT_ROUTE_ERROR";
    case RDMA_CM_EVENT_CONNECT_REQUEST:
      return "RDMA_CM_EVENT_CONNECT_REQUEST";
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
      return "RDMA_CM_EVENT_CONNECT_RESPONSE";
    case RDMA_CM_EVENT_CONNECT_ERROR:
      return "RDMA_CM_EVENT_CONNECT_ERROR";
    case RDMA_CM_EVENT_UNREACHABLE:
      return "RDMA_CM_EVENT_UNREACHABLE";
    case RDMA_CM_EVENT_REJECTED:
      return "RDMA_CM_EVENT_REJECTED";
    case RDMA_CM_EVENT_ESTABLISHED:
      return "RDMA_CM_EVENT_ESTABLISHED";
    case RDMA_CM_EVENT_DISCONNECTED:
      return "RDMA_CM_EVENT_DISCONNECTED";
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      return "RDMA_CM_EVENT_DEVICE_REMOVAL";
    case RDMA_CM_EVENT_MULTICAST_JOIN:
      return "RDMA_CM_EVENT_MULTICAST_JOIN";
    case RDMA_CM_EVENT_MULTICAST_ERROR:
      return "RDMA_CM_EVENT_MULTICAST_ERROR";
    case RDMA_CM_EVENT_ADDR_CHANGE:
      return "RDMA_CM_EVENT_ADDR_CHANGE";
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
    case kEventAddrinfoResolved:
      return "RDMA_CM_EVENT_ADDRINFO_RESOLVED";
    case kEventAddrinfoError:
      return "RDMA_CM_EVENT_ADDRINFO_ERROR";
    default:
      return "UNKNOWN EVENT";
  }
}

void FreeEvent(Event* event) {
  event->magic = 0;
  delete event;
}

}  // namespace qpconnect::rdmacm
