// SPDX-License-Identifier: MIT
#include "sync.h"

#include <cerrno>
#include <cstdlib>

#include "events.h"

namespace qpconnect::rdmacm {

int Complete(Id* id) {
  if (id->pub.event != nullptr) {
    if (Event* kept = EventOf(id->pub.event)) FreeEvent(kept);  // unless the program acked it
    id->pub.event = nullptr;
  }
  rdma_cm_event* event = nullptr;
  if (TakeEvent(id->own_channel, &event) != 0) return -1;
  id->pub.event = event;
  if (event->status == 0) return 0;
  if (EventCode(*event) == RDMA_CM_EVENT_REJECTED)
    errno = ECONNREFUSED;
  else
    errno = event->status < 0 ? -event->status : event->status;
  return -1;
}

}  // namespace qpconnect::rdmacm
