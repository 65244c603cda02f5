// SPDX-License-Identifier: MIT
// When an id whose answer is past its deadline waits on rather than failing
// with UNREACHABLE: the sweep's one rule for a REQ without its REP (active
// side) and a REP without its RTU (passive side).
//
// A peer that still talks on the link (a frame came from it within the
// answer timeout) is alive: the answer may be queued behind its other frames
// (ten thousand REQs of cmtime's burst ahead of an RTU), or behind what this
// side has not read yet (a process starved of CPU while the replies
// arrived, its sweep running between two chunks of them). Such an id waits
// on, up to the bound rdma_cm lets a held request wait (kMraBound, from when
// the connection started) or the answer timeout if that is longer. A peer
// that went silent (its process stopped, its host gone) times out after the
// answer timeout as before.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>

namespace qpconnect::rdmacm {

// How long rdma_cm lets a held request wait: its MRA asks for 2^24 x 4.096 us
// (CMA_CM_MRA_SETTING).
inline constexpr std::chrono::milliseconds kMraBound{68719};

// True if an overdue id waits on: the peer was heard from within
// `answer_timeout` of `now`, and the connection started less than
// max(answer_timeout, kMraBound) ago. A link never heard from has
// last_heard == time_point{}.
bool PeerStillTalking(std::chrono::steady_clock::time_point now,
                      std::chrono::steady_clock::time_point connect_started,
                      std::chrono::steady_clock::time_point last_heard,
                      std::chrono::milliseconds answer_timeout);

}  // namespace qpconnect::rdmacm
