// Waiting for work completions within a deadline, and explaining failed ones.
//
// Thread-safety: one poller per CQ.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <functional>
#include <string>

#include "qpconnect/endpoint.h"
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
};

// Polls `cq` for one completion until `deadline`: busy for the first
// kCompletionSpin (a prompt completion costs no system call), then with
// sleeps doubling from 1 us up to kCompletionMaxSleep, so that a long wait
// costs a few percent of a core, not all of it. kTimeout naming `what` when
// none arrives; kVerbs if ibv_poll_cq fails; the watch's error if it fails.
// A completion with an error status is returned as kTraffic with
// ExplainWcStatus() in the detail.
inline constexpr std::chrono::microseconds kCompletionSpin{50};
inline constexpr std::chrono::microseconds kCompletionMaxSleep{1000};
Result<ibv_wc> PollOne(ibv_cq& cq, Clock::time_point deadline, const std::string& what,
                       Transport transport, const CompletionWait& wait = {});

// The likely cause of a failed completion status, in the user's terms.
std::string ExplainWcStatus(ibv_wc_status status, Transport transport);

}  // namespace qpconnect::verbs
