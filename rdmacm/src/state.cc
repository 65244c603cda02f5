// SPDX-License-Identifier: MIT
#include "state.h"

#include <cerrno>

#include "multicast.h"
#include "qp_resources.h"

namespace qpconnect::rdmacm {
namespace {}  // namespace

Id::Id() = default;
Id::~Id() = default;

const char* IdStateName(IdState s) {
  switch (s) {
    case IdState::kIdle:
      return "idle";
    case IdState::kBound:
      return "bound";
    case IdState::kAddrResolved:
      return "address resolved";
    case IdState::kRouteResolved:
      return "route resolved";
    case IdState::kListening:
      return "listening";
    case IdState::kConnecting:
      return "connecting";
    case IdState::kResponse:
      return "response received";
    case IdState::kRequest:
      return "request received";
    case IdState::kAccepted:
      return "accepted";
    case IdState::kEstablished:
      return "established";
    case IdState::kDisconnected:
      return "disconnected";
    case IdState::kFailed:
      return "failed";
  }
  return "unknown";
}

// Constant-initialized (std::mutex's constructor is constexpr) and with a
// destructor that does nothing: ids and the engine outlive static
// destructors, and may still take it.
constinit Mutex library_mutex;

std::condition_variable_any& AckedCv() {
  static auto* cv = new std::condition_variable_any;  // never destroyed, as the mutex
  return *cv;
}

std::unordered_map<uint32_t, Id*>& IdTable() {
  static auto* table = new std::unordered_map<uint32_t, Id*>;
  return *table;
}

Id* FindId(uint32_t handle) {
  auto it = IdTable().find(handle);
  return it == IdTable().end() ? nullptr : it->second;
}

void RegisterId(Id* id) {
  static uint32_t next = 1;
  while (next == 0 || IdTable().count(next) != 0) ++next;
  id->handle = next++;
  IdTable()[id->handle] = id;
}

void UnregisterId(Id* id) { IdTable().erase(id->handle); }

Id* IdOf(rdma_cm_id* id) {
  auto* priv = reinterpret_cast<Id*>(id);
  if (priv == nullptr || priv->magic != kIdMagic) {
    errno = EINVAL;
    return nullptr;
  }
  return priv;
}

Channel* ChannelOf(rdma_event_channel* channel) {
  auto* priv = reinterpret_cast<Channel*>(channel);
  if (priv == nullptr || priv->magic != kChannelMagic) {
    errno = EINVAL;
    return nullptr;
  }
  return priv;
}

Event* EventOf(rdma_cm_event* event) {
  auto* priv = reinterpret_cast<Event*>(event);
  if (priv == nullptr || priv->magic != kEventMagic) {
    errno = EINVAL;
    return nullptr;
  }
  return priv;
}

}  // namespace qpconnect::rdmacm
