// SPDX-License-Identifier: MIT
// Waiting for work completions within a deadline, and explaining failed ones.
//
// Thread-safety: one poller per CQ.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <functional>
#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/proof_failure.h"
#include "qpconnect/result.h"

namespace qpconnect::verbs {

using Clock = std::chrono::steady_clock;

// How a wait for a completion spends its time, and what it watches meanwhile.
struct CompletionWait {
  // Called about every `watch_interval` while the wait lasts (not at all for
  // a completion that comes sooner); an error it returns ends the wait with
  // that error. For example Exchanger::PollPeer(): a peer that died is
  // noticed within the interval instead of at the deadline.
  std::function<Result<void>()> watch;
  std::chrono::milliseconds watch_interval{100};
  // Completion events: the CQ's channel (created with it; fd non-blocking,
  // Session::CompChannel()). Instead of the back-off, the wait arms the CQ
  // (ibv_req_notify_cq), polls once more (a completion that came before the
  // arming raises no event), then sleeps in poll() on the channel's fd until
  // an event, the next watch or the deadline; every event is acknowledged at
  // once. Events of another CQ on the same channel only wake it up.
  ibv_comp_channel* channel = nullptr;
  // Counts the events taken from the channel, if set.
  uint64_t* events = nullptr;
  // Set to the status of a completion that failed, if set (the proof's
  // cause, proof_failure.h).
  ibv_wc_status* failed_status = nullptr;
};

// Polls `cq` for one completion until `deadline`: busy for the first
// kCompletionSpin (a prompt completion costs no system call), then with
// sleeps doubling from 1 us up to kCompletionMaxSleep, so that a long wait
// costs a few percent of a core, not all of it; with `wait.channel`, asleep
// until a completion event instead. kTimeout naming `what` when none
// arrives; kVerbs if ibv_poll_cq, ibv_req_notify_cq or ibv_get_cq_event fails
// (kIo if poll() does); the watch's error if it fails.
// A completion with an error status is returned as kTraffic with
// ExplainWcStatus() in the detail. With a watch, that error may be the
// peer's doing: a peer that gives up (a server interrupted while serving)
// releases its QPs and says why, and what it says can arrive after the
// completion its release failed. The watch is then asked again for up to
// kPeerExplainGrace (every kPeerExplainPoll); an error it returns in that
// time is appended to the detail ("...; the peer aborted during traffic
// (...): the peer aborted: server interrupted (SIGINT)").
inline constexpr std::chrono::microseconds kCompletionSpin{50};
inline constexpr std::chrono::microseconds kCompletionMaxSleep{1000};
inline constexpr std::chrono::milliseconds kPeerExplainGrace{200};
inline constexpr std::chrono::milliseconds kPeerExplainPoll{10};
Result<ibv_wc> PollOne(ibv_cq& cq, Clock::time_point deadline, const std::string& what,
                       Transport transport, const CompletionWait& wait = {});

// The proof's cause for a failed completion status (proof_failure.h).
ProofCause ProofCauseOfStatus(ibv_wc_status status);

// The likely cause of a failed completion status, in the user's terms.
std::string ExplainWcStatus(ibv_wc_status status, Transport transport);

}  // namespace qpconnect::verbs
