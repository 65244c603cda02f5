// SPDX-License-Identifier: MIT
// The one transition function of the connection manager's state machine
// (cm_table.h): it finds the row for the id's state and the input, runs the
// row's action, and writes id->state. No other code writes id->state
// (cm_table_test checks the sources for it).
//
// An action may reach a verdict on its way (the peer's description does not
// decode, the validator refuses, the device refuses RTR or RTS): the verdict
// is then the input, from the same state, and its row's action (the failure
// ritual) runs instead. A call's action may also refuse the call before
// anything changes (its arguments, a description that cannot be made): -1
// with errno, the state as it was.
//
// Thread-safety: REQUIRES library_mutex held (lock.h).
#pragma once

#include <rdma/rdma_cma.h>

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "cm_env.h"
#include "cm_table.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "state.h"
#include "wire.h"

namespace qpconnect::rdmacm {

// What came with an input; each action reads what its input brings.
struct CmCause {
  const Message* msg = nullptr;                            // a peer's message
  std::optional<Result<EndpointInfo>>* decoded = nullptr;  // REQ, REP: its base, decoded
  const rdma_conn_param* param = nullptr;                  // rdma_connect, rdma_accept
  const void* reject_data = nullptr;                       // rdma_reject's private data
  uint8_t reject_length = 0;                               // and its length
  uint16_t reject_reason = kRejectConsumer;                // and its reason (rdma_reject_ece: 35)
  Id* listener = nullptr;                                  // REQ: the listening id
  const Error* error = nullptr;                            // a verdict: why
  std::chrono::steady_clock::time_point now{};             // the sweep: its time
  std::chrono::steady_clock::time_point heard{};           // kPeerTalking: last heard
  std::vector<const CmLink*>* mra_sent = nullptr;          // the sweep's MRAs so far
};

// Applies `input` to `id`. 0; or -1 with errno for a call refused (EINVAL
// when the state has no row for it, logged as "rdma_accept: the id is
// listening, not a connection request") or failed. Inputs other than calls
// without a row are ignored (0).
int Transition(CmEnv& env, Id* id, CmInput input, const CmCause& cause = {})
    QPCM_REQUIRES(library_mutex);

// For a call whose work comes before Transition (rdma_bind_addr,
// rdma_resolve_addr, rdma_resolve_route, rdma_listen): 0 if `id`'s state has
// a row for `call`, else -1 with errno EINVAL, logged as Transition would.
int CheckCall(const Id* id, CmInput call) QPCM_REQUIRES(library_mutex);

// The time a request held by the program waits between two MRAs: half the
// answer timeout, at most 0.5 s.
std::chrono::milliseconds MraPeriod(const CmEnv& env);

}  // namespace qpconnect::rdmacm
