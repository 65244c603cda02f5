// Waiting for work completions within a deadline, and explaining failed ones.
//
// Thread-safety: one poller per CQ.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"

namespace qpconnect::verbs {

using Clock = std::chrono::steady_clock;

// Busy-polls `cq` for one completion until `deadline`. kTimeout naming `what`
// when none arrives; kVerbs if ibv_poll_cq fails. A completion with an error
// status is returned as kTraffic with ExplainWcStatus() in the detail.
Result<ibv_wc> PollOne(ibv_cq& cq, Clock::time_point deadline, const std::string& what,
                       Transport transport);

// The likely cause of a failed completion status, in the user's terms.
std::string ExplainWcStatus(ibv_wc_status status, Transport transport);

}  // namespace qpconnect::verbs
