// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/traffic.h"

#include <endian.h>

#include <cstdio>
#include <cstring>
#include <optional>

#include "qpconnect/verbs/completion.h"

namespace qpconnect::verbs {
namespace {

constexpr uint32_t kReadSeedBase = 0xa5000000U;
constexpr uint32_t kWriteSeedBase = 0x5a000000U;
constexpr uint32_t kDoneIteration = 0xffffffU;
// The client's immediate value on a ping-pong SEND (traffic.h).
constexpr uint32_t kLastRoundFlag = 0x80000000U;
constexpr uint32_t kImmIterationMask = 0x7fffffffU;

uint32_t MessageSeed(uint32_t iteration, Role sender, size_t qp) {
  return (iteration << 1) ^ (sender == Role::kServer ? 1U : 0U) ^ (static_cast<uint32_t>(qp) << 24);
}

Error Mismatch(const std::string& what, long offset) {
  return Error{ErrorCode::kTraffic, 0, what, "",
               "content mismatch at byte " + std::to_string(offset) +
                   " (data corrupted or landed in the wrong place)"};
}

class Driver {
 public:
  Driver(Session& s, const EndpointInfo& remote, Role role, const TrafficOptions& o)
      : s_(s), remote_(remote), role_(role), o_(o) {}

  bool Pingpong() const { return o_.pattern == TrafficPattern::kPingpong; }

  // Send/Receive with the failing place recorded in the error.
  Result<void> Send(size_t qp, uint32_t iteration, std::optional<uint32_t> imm = std::nullopt) {
    return At(SendOnce(qp, iteration, imm), qp, iteration);
  }
  Result<void> Receive(size_t qp, uint32_t iteration) {
    return At(ReceiveOnce(qp, iteration), qp, iteration);
  }

  static Result<void> At(Result<void> r, size_t qp, uint32_t iteration) {
    if (r) return r;
    Error e = std::move(r).error();
    e.qp_index = static_cast<uint32_t>(qp);
    e.iteration = iteration;
    return e;
  }

  Result<void> SendOnce(size_t qp, uint32_t iteration, std::optional<uint32_t> imm) {
    if (!Pingpong()) {
      FillPattern(s_.SendArea(qp), size_, MessageSeed(iteration, role_, qp));
    } else if (role_ == Role::kClient && iteration == 0) {
      FillPingpongContent(s_.SendArea(qp), size_);  // the server echoes it back
    }  // else: the server sends what Receive() copied into its send area
    QPC_TRY(s_.PostSend(qp, size_, imm));
    const std::string what = What("SEND", qp, iteration);
    auto wc = Poll(s_.SendCq(), what);
    if (!wc) return std::move(wc).error();
    ++report_.messages;
    report_.bytes += size_;
    return Ok();
  }

  Result<void> ReceiveOnce(size_t qp, uint32_t iteration) {
    const std::string what = What("RECV", qp, iteration);
    auto wc = Poll(s_.RecvCq(), what);
    if (!wc) return std::move(wc).error();
    size_t got_qp = static_cast<size_t>(wc->wr_id >> 32);
    auto slot = static_cast<uint32_t>(wc->wr_id & 0xffffffffU);
    uint32_t grh = s_.transport() == Transport::kUd ? kUdGrhBytes : 0;
    if (got_qp != qp || wc->byte_len != size_ + grh) {
      return Error{ErrorCode::kTraffic, 0, What("RECV", qp, iteration), "byte_len",
                   "expected " + std::to_string(size_ + grh) + " bytes on QP index " +
                       std::to_string(qp) + ", got " + std::to_string(wc->byte_len) +
                       " on QP index " + std::to_string(got_qp) +
                       " (the two sides use different -s sizes, or -a on one side only?)"};
    }
    peer_imm_.reset();
    if ((wc->wc_flags & IBV_WC_WITH_IMM) != 0) peer_imm_ = be32toh(wc->imm_data);
    const uint8_t* data = s_.RecvSlot(qp, slot) + grh;
    if (Pingpong() && role_ == Role::kServer) {
      std::memcpy(s_.SendArea(qp), data, size_);  // echo, as the stock server does
    } else if (Pingpong()) {
      if (std::memcmp(data, s_.SendArea(qp), size_) != 0) {
        long at = 0;
        while (data[at] == s_.SendArea(qp)[at]) ++at;
        return Error{ErrorCode::kTraffic, 0, What("RECV", qp, iteration), "",
                     "the peer's reply differs from our message at byte " + std::to_string(at) +
                         " (a stock pingpong server echoes what it received)"};
      }
    } else {
      Role peer = role_ == Role::kClient ? Role::kServer : Role::kClient;
      long bad = FindPatternMismatch(data, size_, MessageSeed(iteration, peer, qp));
      if (bad >= 0) return Mismatch(What("RECV", qp, iteration), bad);
    }
    report_.bytes += size_;
    return s_.PostRecv(qp, slot);
  }

  // Every size's ping-pong, then the totals.
  Result<void> PingPongs() {
    const std::vector<uint32_t> sizes = o_.sweep ? SweepSizes(o_.size) : std::vector{o_.size};
    for (uint32_t size : sizes) QPC_TRY(PingPong(size));
    size_ = o_.size;
    uint64_t rounds = report_.iterations * s_.num_qps();
    if (rounds > 0 && report_.seconds > 0) {
      report_.avg_rtt_us = report_.seconds * 1e6 / static_cast<double>(rounds);
      report_.mbit_per_s = static_cast<double>(report_.bytes) * 8 / report_.seconds / 1e6;
    }
    return Ok();
  }

  // One ping-pong of `size` bytes: until `iters` iterations, the duration,
  // or (server) the client's last-round flag.
  Result<void> PingPong(uint32_t size) {
    size_ = size;
    const size_t n = s_.num_qps();
    std::vector<LatencySamples> rtt(n,
                                    LatencySamples(std::max<size_t>(64, o_.latency_samples / n)));
    const auto start = Clock::now();
    Clock::time_point mark = start;           // the previous round's end
    bool have_mark = role_ == Role::kClient;  // the server's first round has no start
    // No iteration at all with iters 0 (and no duration), as before.
    bool last = o_.duration.count() == 0 && o_.iters == 0;
    uint64_t it = 0;
    for (; !last; ++it) {
      const auto iteration = static_cast<uint32_t>(it);
      if (role_ == Role::kClient) {
        last = o_.duration.count() > 0 ? mark - start >= o_.duration : it + 1 >= o_.iters;
      }
      for (size_t qp = 0; qp < n; ++qp) {
        if (role_ == Role::kClient) {
          const uint32_t imm = (iteration & kImmIterationMask) | (last ? kLastRoundFlag : 0);
          QPC_TRY(Send(qp, iteration, Pingpong() ? std::nullopt : std::optional(imm)));
          QPC_TRY(Receive(qp, iteration));
        } else {
          QPC_TRY(Receive(qp, iteration));
        }
        const auto now = Clock::now();
        if (have_mark) {
          rtt[qp].Add(static_cast<uint64_t>(
              std::chrono::duration_cast<std::chrono::nanoseconds>(now - mark).count()));
        }
        mark = now;
        have_mark = true;
        if (role_ == Role::kServer) {
          if (qp == 0) {
            auto l = FollowClient(it);
            if (!l) return At(std::move(l).error(), qp, iteration);
            last = *l;
          }
          QPC_TRY(Send(qp, iteration));
        }
        if (o_.on_progress && o_.duration.count() == 0 && it < o_.iters) {
          o_.on_progress("traffic", static_cast<size_t>(it) * n + qp + 1, size_t{o_.iters} * n);
        }
      }
    }
    SizeTrafficStats st;
    st.size = size;
    st.iterations = it;
    st.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    st.rtt = LatencySamples::Merge(rtt);
    for (const auto& r : rtt) st.qps.push_back(QpTrafficStats{r.Summary()});
    report_.iterations += it;
    report_.seconds += st.seconds;
    report_.sizes.push_back(std::move(st));
    return Ok();
  }

  // The server, after QP 0's message of iteration `it`: whether it is the
  // last, from the client's immediate value (an older client sends none: then
  // after `iters`, as before).
  Result<bool> FollowClient(uint64_t it) const {
    if (!peer_imm_) return it + 1 >= o_.iters;
    const uint32_t theirs = *peer_imm_ & kImmIterationMask;
    const uint32_t ours = static_cast<uint32_t>(it) & kImmIterationMask;
    if (theirs != ours) {
      return Error{ErrorCode::kTraffic, 0, What("RECV", 0, static_cast<uint32_t>(it)), "imm_data",
                   "the peer sent iteration " + std::to_string(theirs) + " where this side is at " +
                       std::to_string(ours)};
    }
    return (*peer_imm_ & kLastRoundFlag) != 0;
  }

  // This side writes into (and, on RC, reads from) the peer's buffer of QP `qp`,
  // then tells the peer with a SEND.
  Result<void> RdmaTurn(size_t qp) {
    const MrDescriptor& mr = *remote_.qps[qp].mr;
    FillPattern(s_.SendArea(qp), size_, kWriteSeedBase ^ s_.Local().qps[qp].qpn);
    QPC_TRY(s_.PostRdma(qp, IBV_WR_RDMA_WRITE, o_.size, mr.addr, mr.rkey));
    const std::string write = What("RDMA_WRITE", qp, 0);
    auto w = Poll(s_.SendCq(), write);
    if (!w) return std::move(w).error();
    // The peer checks the contents after our "done"; a mismatch there ends
    // its side, and ours fails at its next wait.
    report_.rdma_write_checked = true;
    if (s_.transport() == Transport::kRc) {
      QPC_TRY(s_.PostRdma(qp, IBV_WR_RDMA_READ, o_.size, mr.addr + mr.length / 2, mr.rkey));
      const std::string read = What("RDMA_READ", qp, 0);
      auto r = Poll(s_.SendCq(), read);
      if (!r) return std::move(r).error();
      long bad = FindPatternMismatch(s_.ReadBack(qp), o_.size, kReadSeedBase ^ remote_.qps[qp].qpn);
      if (bad >= 0) return Mismatch(What("RDMA_READ", qp, 0), bad);
      report_.rdma_read_checked = true;
    }
    return Send(qp, kDoneIteration);
  }

  // Waits for the peer's "done" SEND, then checks what it wrote into our buffer.
  Result<void> RdmaCheck(size_t qp) {
    QPC_TRY(Receive(qp, kDoneIteration));
    long bad =
        FindPatternMismatch(s_.RdmaTarget(qp), o_.size, kWriteSeedBase ^ remote_.qps[qp].qpn);
    if (bad >= 0) return Mismatch(What("check peer's RDMA_WRITE", qp, 0), bad);
    return Ok();
  }

  Result<void> Rdma() {
    phase_ = "RDMA WRITE/READ";
    for (size_t qp = 0; qp < s_.num_qps(); ++qp) {
      if (!remote_.qps[qp].mr || remote_.qps[qp].mr->length < uint64_t{o_.size} * 2) {
        return Error{ErrorCode::kIncompatible, 0, "RDMA phase", "mr",
                     "the peer published no MR large enough for " + std::to_string(o_.size) +
                         "-byte RDMA on QP index " + std::to_string(qp)};
      }
      // What the peer reads from QP i is written once the peer read QP i-1's
      // and before it can read QP i's: with shared buffers (session.h) every
      // QP's source is the same bytes. QP 0's was written before the
      // ping-pong. The client writes QP i's before its own turn (the server
      // reads it after the client's "done"); the server writes QP i+1's after
      // the client's "done" on QP i (the client read QP i's before it) and
      // before its own "done" on QP i (after which the client reads QP i+1's).
      if (role_ == Role::kClient && qp > 0) FillSource(qp);
      if (role_ == Role::kClient) {
        QPC_TRY(RdmaTurn(qp));
        QPC_TRY(RdmaCheck(qp));
      } else {
        QPC_TRY(RdmaCheck(qp));
        if (qp + 1 < s_.num_qps()) FillSource(qp + 1);
        QPC_TRY(RdmaTurn(qp));
      }
    }
    return Ok();
  }

  TrafficReport report() const { return report_; }

  void FillSource(size_t qp) {
    FillPattern(s_.RdmaSource(qp), o_.size, kReadSeedBase ^ s_.Local().qps[qp].qpn);
  }

 private:
  // The wait's deadline: the stall's when it comes first (TrafficOptions).
  Clock::time_point Deadline() {
    const auto now = Clock::now();
    if (o_.trace != nullptr) o_.trace->wait_start = now;
    if (o_.stall.count() > 0 && o_.stall < o_.timeout) return now + o_.stall;
    return now + o_.timeout;
  }
  // PollOne() with the stall and the failed status told to the trace.
  Result<ibv_wc> Poll(ibv_cq& cq, const std::string& what) {
    const Clock::time_point deadline = Deadline();
    CompletionWait w = Wait(what);
    ibv_wc_status status = IBV_WC_SUCCESS;
    w.failed_status = &status;
    auto wc = PollOne(cq, deadline, what, s_.transport(), w);
    if (wc) return wc;
    Error e = std::move(wc).error();
    if (o_.trace != nullptr && status != IBV_WC_SUCCESS) o_.trace->status = status;
    if (e.code == ErrorCode::kTimeout && o_.stall.count() > 0 && o_.stall < o_.timeout) {
      if (o_.trace != nullptr) o_.trace->stalled = true;
      e.code = ErrorCode::kTraffic;
      e.detail = "no completion within " + std::to_string(o_.stall.count()) +
                 " ms, the QP's retry budget and a grace: the packets are lost (or the peer "
                 "stopped)";
    }
    return e;
  }
  // The wait's watch: the caller's, its error reworded as the peer gone
  // during this phase of the traffic.
  CompletionWait Wait(const std::string& what) {
    CompletionWait w;
    w.watch_interval = o_.watch_interval;
    w.channel = s_.CompChannel();  // the session's completion events, if any
    w.events = &report_.completion_events;
    if (o_.watch) {
      w.watch = [this, what]() -> Result<void> {
        auto watched = o_.watch();
        if (watched) return watched;
        const Error& cause = watched.error();
        const bool aborted = cause.detail.find("the peer aborted") != std::string::npos;
        Error e;
        e.code = cause.code;
        e.sys_errno = cause.sys_errno;
        e.operation = what;
        e.detail = std::string(aborted ? "the peer aborted" : "the peer went away") +
                   " during traffic (" + phase_ +
                   "): " + (cause.operation.empty() ? std::string() : cause.operation + ": ") +
                   cause.detail;
        return e;
      };
    }
    return w;
  }
  std::string What(const char* op, size_t qp, uint32_t iteration) const {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s on %s qp 0x%06x (index %zu, iteration %u)", op,
                  TransportName(s_.transport()), s_.Local().qps[qp].qpn, qp, iteration);
    return buf;
  }

  Session& s_;
  const EndpointInfo& remote_;
  Role role_;
  TrafficOptions o_;
  TrafficReport report_;
  const char* phase_ = "ping-pong";
  uint32_t size_ = o_.size;           // of the messages now
  std::optional<uint32_t> peer_imm_;  // of the last message received
};

}  // namespace

void FillPattern(uint8_t* out, uint32_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761U + 1;
  for (uint32_t i = 0; i < n; ++i) {
    x = x * 1103515245U + 12345U;
    out[i] = static_cast<uint8_t>(x >> 16);
  }
}

void FillPingpongContent(uint8_t* out, uint32_t n) {
  // The stock client fills its buffer with 0x7b at setup and, with -c, stores
  // page / page_size % sizeof(char) - always 0 - at the start of every page.
  constexpr uint32_t kPage = 4096;
  std::memset(out, 0x7b, n);
  for (uint32_t i = 0; i < n; i += kPage) out[i] = 0;
}

long FindPatternMismatch(const uint8_t* data, uint32_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761U + 1;
  for (uint32_t i = 0; i < n; ++i) {
    x = x * 1103515245U + 12345U;
    if (data[i] != static_cast<uint8_t>(x >> 16)) return static_cast<long>(i);
  }
  return -1;
}

Result<TrafficReport> RunTraffic(Session& session, const EndpointInfo& remote, Role role,
                                 const TrafficOptions& options) {
  if (options.size == 0 || options.size > session.options().message_size) {
    return Error{ErrorCode::kInvalidArgument, 0, "traffic", "size",
                 "size " + std::to_string(options.size) + " is not within 1.." +
                     std::to_string(session.options().message_size)};
  }
  if (remote.qps.size() < session.num_qps()) {
    return Error{ErrorCode::kIncompatible, 0, "traffic", "qps", "the peer has fewer QPs"};
  }
  if (options.pattern == TrafficPattern::kPingpong &&
      (options.duration.count() > 0 || options.sweep)) {
    return Error{ErrorCode::kInvalidArgument, 0, "traffic", options.sweep ? "sweep" : "duration",
                 "the stock pingpong loop has neither a duration mode nor a size sweep"};
  }
  if (options.sweep && options.size < 2) {
    return Error{
        ErrorCode::kInvalidArgument, 0, "traffic", "sweep",
        "a size sweep runs 2..size bytes: size " + std::to_string(options.size) + " is below 2"};
  }
  if (options.duration.count() < 0) {
    return Error{ErrorCode::kInvalidArgument, 0, "traffic", "duration", "negative duration"};
  }
  Driver d(session, remote, role, options);
  d.FillSource(0);
  QPC_TRY(d.PingPongs());
  if (options.rdma && options.pattern == TrafficPattern::kQpc &&
      session.transport() != Transport::kUd) {
    QPC_TRY(d.Rdma());
  }
  return d.report();
}

}  // namespace qpconnect::verbs
