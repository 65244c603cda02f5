// SPDX-License-Identifier: MIT
// The connection manager's handlers over an environment (cm_env.h): each
// turns what happened (a program's call, a peer's message, a link's failure,
// the sweep's clock) into an input of the state table (cm_table.h) and hands
// it to cm_machine.h's Transition. cm.h's functions are these over the
// library's environment (cm_default.cc); the unit tests call these over fakes.
//
// Thread-safety: OnMessage, OnLinkDown take library_mutex; the others
// REQUIRE it (lock.h; clang checks both).
#pragma once

#include <rdma/rdma_cma.h>

#include <memory>
#include <string_view>

#include "cm_env.h"
#include "cm_table.h"
#include "state.h"
#include "wire.h"

namespace qpconnect::rdmacm {

// A message from the peer at the other end of `link`: a REQ makes a new id
// under the listener of the link's address (or waits for one, or is
// refused); an MRA goes to every id of the link; any other goes to the id it
// names, if that id still uses the link (a DREQ for an id destroyed since is
// answered with a DREP).
void OnMessage(CmEnv& env, const std::shared_ptr<CmLink>& link, const Message& msg)
    QPCM_EXCLUDES(library_mutex);
// `link` failed (`input` one of CmInput's kLink*; `text` says why, logged
// once unless the link logged it, kLinkProtocol): every id on it gets the
// input and lets go of it.
void OnLinkDown(CmEnv& env, const std::shared_ptr<CmLink>& link, CmInput input,
                std::string_view text) QPCM_EXCLUDES(library_mutex);

// The API's half; each returns 0 or -1 with errno (and logs why).
int Connect(CmEnv& env, Id* id, const rdma_conn_param* param) QPCM_REQUIRES(library_mutex);
int Accept(CmEnv& env, Id* id, const rdma_conn_param* param) QPCM_REQUIRES(library_mutex);
// rdma_reject with reason 28; rdma_reject_ece with 35 (ece.h).
int Reject(CmEnv& env, Id* id, const void* private_data, uint8_t length,
           uint16_t reason = kRejectConsumer) QPCM_REQUIRES(library_mutex);
int Disconnect(CmEnv& env, Id* id) QPCM_REQUIRES(library_mutex);
int Establish(CmEnv& env, Id* id) QPCM_REQUIRES(library_mutex);
// rdma_destroy_id: tells a connected or requesting peer, lets go of the link.
void Forget(CmEnv& env, Id* id) QPCM_REQUIRES(library_mutex);

// The sweep (run by CmHost::ArmSweep): every id past its deadline gets
// kDeadline, or kPeerTalking when the peer still talks (overdue.h); asks
// for the next sweep while any deadline runs.
void Sweep(CmEnv& env) QPCM_REQUIRES(library_mutex);

}  // namespace qpconnect::rdmacm
