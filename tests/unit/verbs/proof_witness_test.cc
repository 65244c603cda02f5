// SPDX-License-Identifier: MIT
// The proof's witness over the fake env (tests/fakes/fake_env.h): the retry
// budget and the counters read through the QpEnv seam, the peer's failed
// proof seen during a wait, and the trade of notes after a failure, with a
// peer that answers and one that does not.
#include "qpconnect/verbs/proof_witness.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_env.h"

namespace qpconnect {
namespace {

using qpconnect::testing::FakeEnv;
using std::chrono::milliseconds;

// Scripted: PollPeer()'s answer, the stage PeerStage() shows, and the
// answer of BarrierWithNote() (the notes sent are recorded).
class NoteExchanger : public Exchanger {
 public:
  Result<EndpointInfo> Exchange(const EndpointInfo& local, milliseconds deadline) override {
    (void)deadline;
    return local;
  }
  Result<void> Barrier(std::string_view stage, milliseconds deadline) override {
    (void)stage;
    (void)deadline;
    return Ok();
  }
  Result<void> PollPeer() override { return poll; }
  std::optional<std::string> PeerStage() override { return peer_stage; }
  Result<std::string> BarrierWithNote(std::string_view s, std::string_view note,
                                      milliseconds deadline) override {
    stages.emplace_back(s);
    notes.emplace_back(note);
    waited = deadline;
    return answer;
  }

  Result<void> poll = Ok();
  std::optional<std::string> peer_stage;
  Result<std::string> answer = std::string();
  std::vector<std::string> stages, notes;
  milliseconds waited{0};
};

PortCounters Counters(const char* dev, uint64_t sent, uint64_t rcvd) {
  PortCounters c;
  c.device = dev;
  c.port = 1;
  c.state = "ACTIVE";
  c.values = {{"rcvd_pkts", rcvd}, {"sent_pkts", sent}};
  return c;
}

RocePathFacts Path() {
  RocePathFacts f;
  f.netdev = NetdevInfo{"veth1", *MacFromString("02:00:0a:63:00:02"), 0, 1500};
  f.neighbour = NeighbourFact{"10.99.0.1", "veth1", NeighbourState::kPermanent,
                              MacFromString("02:00:00:00:00:99")};
  return f;
}

RocePathQuery Query() {
  Gid g = *GidFromString("::ffff:10.99.0.2");
  return {GidEntry{1, g, GidType::kRoceV2, GidFamily::kIpv4, "veth1"},
          *GidFromString("::ffff:10.99.0.1")};
}

struct Rig {
  Rig() : env("host-a", 2), qp(env.AddQp(IBV_QPT_RC, 0x11)) {
    env.SetRetryBudget(RetryBudget{true, 14, 7});
    env.SetPath(Path());
    env.AddCounters(Counters("rxe1", 100, 100));  // before
    env.AddCounters(Counters("rxe1", 108, 100));  // after: 8 sent, none back
  }
  FakeEnv env;
  ibv_qp* qp;
};

TEST(ProofWitness, StallsAfterTheQpsRetryBudgetAndAGrace) {
  Rig r;
  auto w = verbs::ProofWitness::Begin(r.env, *r.qp, 1, Query());
  EXPECT_EQ(w.budget().timeout, 14);
  EXPECT_EQ(w.stall(), milliseconds(537) + kProofStallGrace);
}

TEST(ProofWitness, WatchSeesThePeersFailedProof) {
  Rig r;
  NoteExchanger x;
  auto w = verbs::ProofWitness::Begin(r.env, *r.qp, 1, Query());
  EXPECT_TRUE(w.Watch(x));
  x.peer_stage = "done";  // the peer finished first: not a failure
  EXPECT_TRUE(w.Watch(x));
  x.peer_stage = verbs::kProofFailedStage;
  auto watched = w.Watch(x);
  ASSERT_FALSE(watched);
  EXPECT_EQ(watched.error().code, ErrorCode::kTraffic);
  EXPECT_EQ(watched.error().detail, "the peer's proof failed");
  EXPECT_TRUE(w.peer_failed());
  EXPECT_TRUE(w.Explains(verbs::ProofTrace{}));
}

TEST(ProofWitness, WatchPassesAPeerThatWentAway) {
  Rig r;
  NoteExchanger x;
  x.poll = Error{ErrorCode::kIo, 0, "receive", "", "the peer closed the connection"};
  auto w = verbs::ProofWitness::Begin(r.env, *r.qp, 1, Query());
  auto watched = w.Watch(x);
  ASSERT_FALSE(watched);
  EXPECT_EQ(watched.error().code, ErrorCode::kIo);
  EXPECT_FALSE(w.peer_failed());
  EXPECT_FALSE(w.Explains(verbs::ProofTrace{}));  // gone: nothing to trade
}

TEST(ProofWitness, TradesNotesAndNamesWherePacketsStop) {
  Rig r;
  NoteExchanger x;
  ProofSide peer;
  peer.cause = ProofCause::kPeerFailed;
  peer.device = "rxe0";
  peer.port = 1;
  peer.port_state = "ACTIVE";
  peer.address = "10.99.0.1";
  peer.netdev = "veth0";
  peer.netdev_mac = MacFromString("02:00:0a:63:00:01");
  peer.delta = Counters("rxe0", 0, 0);
  x.answer = EncodeProofNote(peer);

  auto w = verbs::ProofWitness::Begin(r.env, *r.qp, 1, Query());
  verbs::ProofTrace trace;
  trace.status = IBV_WC_RETRY_EXC_ERR;
  trace.wait_start = std::chrono::steady_clock::now();
  ASSERT_TRUE(w.Explains(trace));
  verbs::ProofOutcome out = w.Explain(trace, x);

  ASSERT_EQ(x.stages.size(), 1u);
  EXPECT_EQ(x.stages[0], verbs::kProofFailedStage);
  EXPECT_EQ(x.waited, verbs::kPeerNoteWait);
  auto sent = DecodeProofNote(x.notes[0]);
  ASSERT_TRUE(sent) << sent.error().ToString();
  EXPECT_EQ(sent->cause, ProofCause::kRetryExceeded);
  EXPECT_EQ(sent->delta.Get("sent_pkts"), 8u);  // after - before
  ASSERT_TRUE(out.remote);
  EXPECT_TRUE(out.peer_silence.empty());
  EXPECT_TRUE(out.verdict.path_broken);
  EXPECT_NE(out.verdict.text.find("rxe1 sent 8 packets to 10.99.0.1 and rxe0 received none: the "
                                  "neighbour entry for 10.99.0.1 on veth1 is 02:00:00:00:00:99 "
                                  "PERMANENT, the peer's veth0 is 02:00:0a:63:00:01"),
            std::string::npos)
      << out.verdict.text;
  // Reported at once: well before the budget (537 ms from the wait's start)
  // has run out.
  EXPECT_LT(out.after_budget_ms, 0);
}

TEST(ProofWitness, ReportsAloneWhenThePeerDoesNotAnswer) {
  Rig r;
  NoteExchanger x;
  x.answer = Error{ErrorCode::kTimeout, 0, "barrier", "", "the peer sent nothing within 1500 ms"};
  auto w = verbs::ProofWitness::Begin(r.env, *r.qp, 1, Query());
  verbs::ProofTrace trace;
  trace.stalled = true;
  trace.wait_start = std::chrono::steady_clock::now();
  verbs::ProofOutcome out = w.Explain(trace, x);
  EXPECT_FALSE(out.remote);
  EXPECT_NE(out.peer_silence.find("sent nothing within 1500 ms"), std::string::npos);
  EXPECT_EQ(out.local.cause, ProofCause::kNoCompletion);
  EXPECT_FALSE(out.verdict.path_broken);  // alone: not judged (exit 7, not 10)
  EXPECT_NE(out.verdict.text.find("the peer's counters are unknown"), std::string::npos)
      << out.verdict.text;
}

}  // namespace
}  // namespace qpconnect
