// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/proof_witness.h"

#include <utility>

#include "qpconnect/verbs/completion.h"

namespace qpconnect::verbs {

ProofWitness ProofWitness::Begin(QpEnv& env, ibv_qp& qp, uint8_t port,
                                 std::optional<RocePathQuery> path) {
  ProofWitness w(env, *qp.context, port);
  w.path_ = std::move(path);
  if (auto b = env.ReadRetryBudget(qp)) w.budget_ = *b;
  w.before_ = env.ReadPortCounters(*qp.context, port);
  return w;
}

Result<void> ProofWitness::Watch(Exchanger& exchanger) {
  QPC_TRY(exchanger.PollPeer());
  if (!peer_failed_) {
    auto stage = exchanger.PeerStage();
    if (!stage || *stage != kProofFailedStage) return Ok();
    peer_failed_ = true;
  }
  return Error{ErrorCode::kTraffic, 0, "proof", "", "the peer's proof failed"};
}

bool ProofWitness::Explains(const ProofTrace& trace) const {
  return peer_failed_ || trace.status.has_value() || trace.stalled;
}

ProofOutcome ProofWitness::Explain(const ProofTrace& trace, Exchanger& exchanger) {
  ProofOutcome out;
  out.budget = budget_;
  const ProofCause cause = trace.status    ? ProofCauseOfStatus(*trace.status)
                           : trace.stalled ? ProofCause::kNoCompletion
                                           : ProofCause::kPeerFailed;
  PortCounters after = env_->ReadPortCounters(*ctx_, port_);
  std::optional<RocePathFacts> path;
  if (path_) path = env_->ReadPath(*path_);
  out.local = MakeProofSide(cause, CounterDelta(before_, after), path);
  const auto budget_end = trace.wait_start + budget_.Total();
  auto late = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - budget_end).count();
  };
  out.local.after_budget_ms = late();

  auto peer =
      exchanger.BarrierWithNote(kProofFailedStage, EncodeProofNote(out.local), kPeerNoteWait);
  if (!peer) {
    out.peer_silence = peer.error().ToString();
  } else if (auto side = DecodeProofNote(*peer)) {
    out.remote = std::move(*side);
  } else {
    out.peer_silence = "its note did not decode: " + side.error().ToString();
  }
  out.verdict = ExplainProof(out.local, out.remote);
  out.after_budget_ms = late();
  return out;
}

}  // namespace qpconnect::verbs
