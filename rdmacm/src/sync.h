// SPDX-License-Identifier: MIT
// Synchronous ids (rdma_create_id with a NULL channel, rdma_create_ep): each
// call blocks until its event, as librdmacm's do (its ucma_complete).
//
// Thread-safety: Complete REQUIRES library_mutex NOT held (it waits; lock.h).
#pragma once

#include "state.h"

namespace qpconnect::rdmacm {

inline bool IsSync(const Id* id) { return id->own_channel != nullptr; }

// Waits for the id's next event and keeps it in id->pub.event (acking the
// one kept before). 0, or -1 with errno: ECONNREFUSED for REJECTED, else the
// event's status (negative errno or a positive reason).
int Complete(Id* id) QPCM_EXCLUDES(library_mutex);

}  // namespace qpconnect::rdmacm
