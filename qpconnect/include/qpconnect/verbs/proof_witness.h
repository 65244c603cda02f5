// SPDX-License-Identifier: MIT
// The witness of a traffic proof (issue 31 item 3): it reads the port
// counters and the QP's retry budget before the proof, watches the peer
// during it, and when the proof fails, reads the counters and the path facts
// again, trades what each side saw with the peer over the out-of-band
// channel and names where the packets stop (proof_failure.h).
//
//   ProofWitness w = ProofWitness::Begin(env, qp, port, path_query);
//   options.stall = w.stall();  options.trace = &trace;
//   options.watch = [&] { return w.Watch(exchanger); };
//   auto r = RunTraffic(...);
//   if (!r && w.Explains(r.error(), trace)) auto out = w.Explain(trace, exchanger);
//
// The trade is one barrier of stage kProofFailedStage carrying each side's
// note (Exchanger::BarrierWithNote). A side whose proof failed enters it at
// once; its peer, still waiting for a completion, sees that barrier waiting
// (Exchanger::PeerStage(), checked by Watch() about every 100 ms), stops
// and enters it too. Both therefore report within about the stall
// (ProofStall: the retry budget plus 1.5 s) plus the note wait after the
// budget ran out, whether or not the device ever completed the work request
// with an error. A peer that does not answer within kPeerNoteWait (gone, or
// an older qpconnect) leaves this side to report alone; the caller should
// then abort the channel (nothing after a successful trade: the peer may
// still be reading it).
//
// Thread-safety: one thread, the traffic's.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <optional>
#include <string>

#include "qpconnect/exchanger.h"
#include "qpconnect/proof_failure.h"
#include "qpconnect/result.h"
#include "qpconnect/roce_path.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/traffic.h"

namespace qpconnect::verbs {

inline constexpr char kProofFailedStage[] = "proof-failed";
// How long a side whose proof failed waits for the peer's note.
inline constexpr std::chrono::milliseconds kPeerNoteWait{1500};

struct ProofOutcome {
  ProofVerdict verdict;
  ProofSide local;
  std::optional<ProofSide> remote;  // the peer's note, when it answered
  std::string peer_silence;         // why it did not (empty when it answered)
  RetryBudget budget;
  // From the end of the retry budget (counted from the start of the wait
  // that ended the proof) to now, the verdict made.
  int64_t after_budget_ms = 0;
};

class ProofWitness {
 public:
  // Before the proof: `port`'s counters and `qp`'s retry budget through
  // `env` (a budget that cannot be read counts as none: the stall is then
  // the grace alone). `path`: the RoCE path to read again at failure time
  // (nullopt: none, e.g. InfiniBand).
  static ProofWitness Begin(QpEnv& env, ibv_qp& qp, uint8_t port,
                            std::optional<RocePathQuery> path);

  const RetryBudget& budget() const { return budget_; }
  // TrafficOptions::stall for this proof: ProofStall(budget()).
  std::chrono::milliseconds stall() const { return ProofStall(budget_); }

  // TrafficOptions::watch: `exchanger`'s PollPeer(), then the peer's
  // kProofFailedStage barrier, if one waits, as kTraffic "the peer's proof
  // failed" (peer_failed() true from then on).
  Result<void> Watch(Exchanger& exchanger);
  bool peer_failed() const { return peer_failed_; }

  // Whether the traffic's failure `e` is one the trade explains: a failed
  // completion, a stall, or the peer's failed proof (not a peer that went
  // away, nor a content mismatch).
  bool Explains(const ProofTrace& trace) const;

  // REQUIRES: Explains(trace). Reads the counters and the path again, trades
  // notes with the peer (at most kPeerNoteWait) and explains.
  ProofOutcome Explain(const ProofTrace& trace, Exchanger& exchanger);

 private:
  ProofWitness(QpEnv& env, ibv_context& ctx, uint8_t port) : env_(&env), ctx_(&ctx), port_(port) {}

  QpEnv* env_;
  ibv_context* ctx_;
  uint8_t port_;
  std::optional<RocePathQuery> path_;
  RetryBudget budget_;
  PortCounters before_;
  bool peer_failed_ = false;
};

}  // namespace qpconnect::verbs
