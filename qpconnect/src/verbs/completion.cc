// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/completion.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <thread>

#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::verbs {
namespace {

// One step of an event wait on `cq` (see CompletionWait::channel): arms it if
// `armed` is false (the caller then polls again), else sleeps in poll() on
// the channel until an event or `until`, and takes and acknowledges the
// event. `armed` stays true while this CQ's arming still stands.
Result<void> AwaitEvent(ibv_cq& cq, const CompletionWait& wait, Clock::time_point until,
                        bool& armed) {
  if (!armed) {
    if (int rc = ibv_req_notify_cq(&cq, 0); rc != 0) return VerbsError("ibv_req_notify_cq", rc);
    armed = true;
    return Ok();
  }
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
  pollfd p{wait.channel->fd, POLLIN, 0};
  const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
  if (n < 0 && errno != EINTR) return ErrnoError(ErrorCode::kIo, errno, "poll completion channel");
  if (n <= 0) return Ok();
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  if (ibv_get_cq_event(wait.channel, &ev_cq, &ev_ctx) != 0) {
    if (errno == EAGAIN || errno == EINTR) return Ok();
    return VerbsError("ibv_get_cq_event", errno);
  }
  ibv_ack_cq_events(ev_cq, 1);
  if (wait.events != nullptr) ++*wait.events;
  if (ev_cq == &cq) armed = false;  // its arming is spent
  return Ok();
}

}  // namespace

ProofCause ProofCauseOfStatus(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
      return ProofCause::kRetryExceeded;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return ProofCause::kRnrRetryExceeded;
    case IBV_WC_REM_ACCESS_ERR:
      return ProofCause::kRemoteAccess;
    case IBV_WC_REM_INV_REQ_ERR:
      return ProofCause::kRemoteInvalidRequest;
    case IBV_WC_REM_OP_ERR:
      return ProofCause::kRemoteOperation;
    case IBV_WC_LOC_PROT_ERR:
      return ProofCause::kLocalProtection;
    case IBV_WC_LOC_LEN_ERR:
      return ProofCause::kLocalLength;
    case IBV_WC_LOC_QP_OP_ERR:
      return ProofCause::kLocalQpOperation;
    case IBV_WC_RESP_TIMEOUT_ERR:
      return ProofCause::kResponseTimeout;
    case IBV_WC_WR_FLUSH_ERR:
      return ProofCause::kFlushed;
    default:
      return ProofCause::kOtherStatus;
  }
}

std::string ExplainWcStatus(ibv_wc_status status, Transport transport) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
      return "transport retry counter exceeded: the peer never acknowledged. Likely the peer "
             "QP is not at RTR (or is gone), or this side's dest_qp_num, dgid/dlid or rq_psn "
             "does not match the peer (check both sides with qp-validate), or a RoCE GID of "
             "the wrong type/family/link-local scope";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "RNR retry counter exceeded: the peer had no receive posted (receives must be "
             "posted before the peer sends; rnr_retry 0 fails at the first RNR NAK)";
    case IBV_WC_REM_ACCESS_ERR:
      return "remote access error: the rkey, address or length is outside the peer's MR, or "
             "the MR or QP lacks REMOTE_READ/REMOTE_WRITE access";
    case IBV_WC_LOC_LEN_ERR:
      return transport == Transport::kUd
                 ? "local length error: the receive buffer is too small (UD receives need 40 "
                   "extra bytes for the GRH) or the message exceeds the path MTU"
                 : "local length error: the receive buffer is smaller than the message sent";
    case IBV_WC_REM_INV_REQ_ERR:
      return "remote invalid request: the message is larger than the peer's receive buffer, "
             "the path MTUs differ, or the operation is not allowed on the peer QP";
    case IBV_WC_LOC_PROT_ERR:
      return "local protection error: the buffer is not inside a registered MR with this lkey";
    case IBV_WC_LOC_QP_OP_ERR:
      return "local QP operation error: the work request is invalid for this QP (e.g. larger "
             "than the MTU on UD, or the QP is not in RTS)";
    case IBV_WC_WR_FLUSH_ERR:
      return "flushed: the QP went to the error state because of an earlier failure";
    case IBV_WC_REM_OP_ERR:
      return "remote operation error: the peer could not complete the request";
    case IBV_WC_RESP_TIMEOUT_ERR:
      return "response timeout: the peer did not answer an RDMA READ/atomic in time";
    default:
      return "";
  }
}

Result<ibv_wc> PollOne(ibv_cq& cq, Clock::time_point deadline, const std::string& what,
                       Transport transport, const CompletionWait& wait) {
  ibv_wc wc{};
  const auto start = Clock::now();
  auto next_watch = start + wait.watch_interval;
  std::chrono::microseconds sleep{0};
  bool armed = false;
  for (;;) {
    int n = ibv_poll_cq(&cq, 1, &wc);
    if (n < 0) return VerbsError("ibv_poll_cq", -n);
    if (n == 1) break;
    const auto now = Clock::now();
    if (now >= deadline) {
      return Error{ErrorCode::kTimeout, 0, what, "",
                   "no completion before the deadline (the peer may be gone, not at RTR/RTS, "
                   "or unreachable)"};
    }
    if (wait.watch && now >= next_watch) {
      if (auto watched = wait.watch(); !watched) return std::move(watched).error();
      next_watch = Clock::now() + wait.watch_interval;
    }
    if (wait.channel != nullptr) {
      QPC_TRY(AwaitEvent(cq, wait, wait.watch ? std::min(deadline, next_watch) : deadline, armed));
      continue;
    }
    if (now - start < kCompletionSpin) continue;
    // Bounded back-off: a completion is seen at most kCompletionMaxSleep late.
    sleep = std::min(kCompletionMaxSleep, std::max(sleep * 2, std::chrono::microseconds(1)));
    std::this_thread::sleep_for(std::min<Clock::duration>(sleep, deadline - now));
  }
  if (wc.status != IBV_WC_SUCCESS) {
    if (wait.failed_status != nullptr) *wait.failed_status = wc.status;
    char head[160];
    std::snprintf(head, sizeof head, "work completion %s (status %d, vendor_err 0x%x, qp 0x%06x)",
                  ibv_wc_status_str(wc.status), static_cast<int>(wc.status), wc.vendor_err,
                  wc.qp_num);
    std::string detail = head;
    std::string cause = ExplainWcStatus(wc.status, transport);
    if (!cause.empty()) detail += "; likely cause: " + cause;
    if (wait.watch) {
      // What the peer says, if it says it soon (completion.h).
      const auto until = Clock::now() + kPeerExplainGrace;
      for (;;) {
        if (auto watched = wait.watch(); !watched) {
          detail += "; " + watched.error().detail;
          break;
        }
        if (Clock::now() >= until) break;
        std::this_thread::sleep_for(kPeerExplainPoll);
      }
    }
    return Error{ErrorCode::kTraffic, 0, what, "", detail};
  }
  return wc;
}

}  // namespace qpconnect::verbs
