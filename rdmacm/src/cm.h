// SPDX-License-Identifier: MIT
// The connection manager's state machine over the out-of-band links: the
// IB CM's REQ/REP/REJ/RTU/DREQ/DREP roles and rdma_cm's events, with the
// validator between the exchange and any modify (issue 29, items 2, 4, 5).
//
//   active                          passive
//   rdma_connect    -- REQ -->      CONNECT_REQUEST (new id)
//                   <-- REP --      rdma_accept: validate, RTR
//   validate, RTR, RTS
//   ESTABLISHED     -- RTU -->      RTS, ESTABLISHED
//   (UD: the REP ends it: ESTABLISHED with param.ud on the active side only)
//   A validator error on either side: REJ both ways as REJECTED; no listener:
//   REJECTED status 8; no answer or a dropped link: UNREACHABLE; a dropped
//   link once connected: DISCONNECTED.
//
// The flow is cm_flow.h's over an environment (cm_env.h), its moves the
// state table's (cm_table.h, cm_machine.h); these are the same calls over
// the library's environment (cm_default.cc: qp.h, link.h, the engine's
// timers, the steady clock), for the API and the links.
//
// Thread-safety: OnMessage and OnLinkDown take library_mutex; the others
// REQUIRE it (lock.h; clang checks both).
#pragma once

#include <rdma/rdma_cma.h>

#include <memory>

#include "cm_env.h"
#include "link.h"
#include "state.h"
#include "wire.h"

namespace qpconnect::rdmacm {

void OnMessage(const std::shared_ptr<Link>& link, const Message& msg) QPCM_EXCLUDES(library_mutex);
void OnLinkDown(const std::shared_ptr<Link>& link, const LinkFailure& failure)
    QPCM_EXCLUDES(library_mutex);

// The API's half; each returns 0 or -1 with errno (and logs why).
int Connect(Id* id, const rdma_conn_param* param) QPCM_REQUIRES(library_mutex);
int Accept(Id* id, const rdma_conn_param* param) QPCM_REQUIRES(library_mutex);
// rdma_reject (reason 28), rdma_reject_ece (35, ece.h).
int Reject(Id* id, const void* private_data, uint8_t length, uint16_t reason = kRejectConsumer)
    QPCM_REQUIRES(library_mutex);
int Disconnect(Id* id) QPCM_REQUIRES(library_mutex);
int Establish(Id* id) QPCM_REQUIRES(library_mutex);
// rdma_destroy_id: tells a connected or requesting peer, drops the link.
void Forget(Id* id) QPCM_REQUIRES(library_mutex);

// How long a REQ or REP waits for its answer (QPCM_TIMEOUT_MS, default 10 s).
std::chrono::milliseconds AnswerTimeout();

// The library's environment: made on first use, never freed.
CmEnv& DefaultCmEnv();

}  // namespace qpconnect::rdmacm
