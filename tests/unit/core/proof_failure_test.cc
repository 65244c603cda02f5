// SPDX-License-Identifier: MIT
#include "qpconnect/proof_failure.h"

#include <gtest/gtest.h>

#include <string>

namespace qpconnect {
namespace {

using std::chrono::milliseconds;

GidEntry Gid4(const char* text, const char* netdev) {
  Gid g = *GidFromString(text);
  return {1, g, GidType::kRoceV2, FamilyOfGid(g, GidType::kRoceV2), netdev};
}

// The facts of the lab's client (rxe1 on veth1, 10.99.0.2) towards the
// server (10.99.0.1), its neighbour entry holding `mac`.
RocePathFacts ClientPath(const char* mac, NeighbourState state = NeighbourState::kPermanent) {
  RocePathFacts f;
  f.query = {Gid4("::ffff:10.99.0.2", "veth1"), *GidFromString("::ffff:10.99.0.1")};
  f.netdev = NetdevInfo{"veth1", *MacFromString("02:00:0a:63:00:02"), 0, 1500};
  f.route = RouteFact{"veth1", "", "unicast", 101, 0};
  f.neighbour = NeighbourFact{"10.99.0.1", "veth1", state, MacFromString(mac)};
  return f;
}

RocePathFacts ServerPath() {
  RocePathFacts f;
  f.query = {Gid4("::ffff:10.99.0.1", "veth0"), *GidFromString("::ffff:10.99.0.2")};
  f.netdev = NetdevInfo{"veth0", *MacFromString("02:00:0a:63:00:01"), 0, 1500};
  f.route = RouteFact{"veth0", "", "unicast", 100, 0};
  f.neighbour = NeighbourFact{"10.99.0.2", "veth0", NeighbourState::kPermanent,
                              MacFromString("02:00:0a:63:00:02")};
  return f;
}

PortCounters Counters(const char* dev, uint64_t sent, uint64_t rcvd, uint64_t retried,
                      const char* state = "ACTIVE") {
  PortCounters c;
  c.device = dev;
  c.port = 1;
  c.state = state;
  c.values = {{"completer_retry_err", retried},
              {"duplicate_request", 0},
              {"out_of_seq_request", 0},
              {"rcvd_pkts", rcvd},
              {"retry_exceeded_err", retried > 0 ? 1 : 0},
              {"sent_pkts", sent}};
  return c;
}

TEST(RetryBudget, IsTheAckTimeoutTimesTheTries) {
  RetryBudget b{true, 14, 7};
  // 4.096 us x 2^14 = 67.1 ms, 8 tries.
  EXPECT_EQ(b.Total().count(), int64_t{4096} * (1 << 14) * 8);
  EXPECT_EQ(b.Text(), "ACK timeout 14 (67.1 ms) x 8 tries = 537 ms");
  EXPECT_EQ(ProofStall(b), milliseconds(537) + kProofStallGrace);
}

TEST(RetryBudget, NoneOffRcOrWithAnInfiniteTimeout) {
  EXPECT_EQ(RetryBudget{}.Total().count(), 0);
  EXPECT_EQ(ProofStall(RetryBudget{}), kProofStallGrace);
  RetryBudget forever{true, 0, 7};
  EXPECT_EQ(forever.Total().count(), 0);
  EXPECT_NE(forever.Text().find("waits forever"), std::string::npos);
}

TEST(CounterDelta, SubtractsPerCounterAndKeepsTheNewState) {
  PortCounters before = Counters("rxe1", 10, 10, 0);
  PortCounters after = Counters("rxe1", 18, 10, 7, "DOWN");
  PortCounters d = CounterDelta(before, after);
  EXPECT_EQ(d.state, "DOWN");
  EXPECT_EQ(d.Get("sent_pkts"), 8u);
  EXPECT_EQ(d.Get("rcvd_pkts"), 0u);
  PacketCounts p = PacketCountsOf(d);
  EXPECT_EQ(p.sent, 8u);
  EXPECT_EQ(p.received, 0u);
  EXPECT_EQ(p.retried, 7u);
  EXPECT_EQ(p.discarded, 0u);
}

TEST(CounterDelta, SaysWhyWhenNothingWasRead) {
  PortCounters none;
  none.unknown = "no counters under /sys/class/infiniband/mlx5_0/ports/1";
  EXPECT_EQ(CounterDelta(none, none).unknown, none.unknown);
  EXPECT_FALSE(PacketCountsOf(none).sent);
}

TEST(ProofNote, RoundTrips) {
  ProofSide s = MakeProofSide(ProofCause::kRetryExceeded,
                              CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 8, 0, 7)),
                              ClientPath("02:00:00:00:00:99"));
  s.after_budget_ms = 42;
  const std::string note = EncodeProofNote(s);
  EXPECT_LE(note.size(), 1500u);
  auto back = DecodeProofNote(note);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->cause, ProofCause::kRetryExceeded);
  EXPECT_EQ(back->device, "rxe1");
  EXPECT_EQ(back->port_state, "ACTIVE");
  EXPECT_EQ(back->address, "10.99.0.2");
  EXPECT_EQ(back->netdev, "veth1");
  EXPECT_EQ(back->neighbour_address, "10.99.0.1");
  EXPECT_EQ(back->neighbour_state, "PERMANENT");
  ASSERT_TRUE(back->neighbour_mac);
  EXPECT_EQ(MacToString(*back->neighbour_mac), "02:00:00:00:00:99");
  EXPECT_EQ(back->after_budget_ms, 42);
  EXPECT_EQ(back->delta.Get("sent_pkts"), 8u);
  EXPECT_EQ(back->delta.Get("completer_retry_err"), 7u);
}

TEST(ProofNote, EscapesSeparatorsAndRefusesGarbage) {
  ProofSide s;
  s.cause = ProofCause::kNoCompletion;
  s.neighbour_reason = "a=b; c%d";
  auto back = DecodeProofNote(EncodeProofNote(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->neighbour_reason, "a=b; c%d");
  EXPECT_FALSE(DecodeProofNote("cause=nonsense"));
  EXPECT_FALSE(DecodeProofNote("dev=rxe0"));  // no cause
  EXPECT_FALSE(DecodeProofNote("cause=flushed;c.sent_pkts=x"));
  EXPECT_FALSE(DecodeProofNote("cause=flushed;nwhy=%4"));
  EXPECT_TRUE(DecodeProofNote("cause=flushed;later=ignored"));
}

TEST(ProofNote, StaysWithinTheBarrierNoteWithManyCounters) {
  ProofSide s;
  for (int i = 0; i < 200; ++i) s.delta.values.emplace_back("counter_" + std::to_string(i), i);
  s.delta.values.emplace_back("sent_pkts", 8);
  const std::string note = EncodeProofNote(s);
  EXPECT_LE(note.size(), 1500u);
  auto back = DecodeProofNote(note);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->delta.Get("sent_pkts"), 8u);  // the ones that say where packets go first
}

// The example: the client's neighbour entry for the server holds a
// wrong MAC; the client's SENDs go nowhere.
TEST(ExplainProof, NamesWherePacketsStopFromBothSides) {
  ProofSide client =
      MakeProofSide(ProofCause::kRetryExceeded,
                    CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 8, 0, 7)),
                    ClientPath("02:00:00:00:00:99"));
  ProofSide server = MakeProofSide(
      ProofCause::kPeerFailed, CounterDelta(Counters("rxe0", 0, 0, 0), Counters("rxe0", 0, 0, 0)),
      ServerPath());
  const char* want =
      "rxe1 sent 8 packets to 10.99.0.1 and rxe0 received none: the neighbour entry for "
      "10.99.0.1 on veth1 is 02:00:00:00:00:99 PERMANENT, the peer's veth0 is 02:00:0a:63:00:01";
  ProofVerdict c = ExplainProof(client, server);
  EXPECT_TRUE(c.path_broken);
  EXPECT_EQ(c.cause, ProofCause::kRetryExceeded);
  EXPECT_NE(c.text.find(want), std::string::npos) << c.text;
  EXPECT_EQ(c.text.rfind("retry-exceeded (the path is broken", 0), 0u) << c.text;
  ASSERT_EQ(c.counters.size(), 2u);
  EXPECT_EQ(c.counters[0].rfind("rxe1 port 1 (ACTIVE): sent 8, received 0, retried 7", 0), 0u)
      << c.counters[0];

  // The server says the same, as the peer's failure.
  ProofVerdict s = ExplainProof(server, client);
  EXPECT_TRUE(s.path_broken);
  EXPECT_EQ(s.cause, ProofCause::kRetryExceeded);
  EXPECT_EQ(s.text.rfind("the peer's proof failed: retry-exceeded", 0), 0u) << s.text;
  EXPECT_NE(s.text.find(want), std::string::npos) << s.text;
}

TEST(ExplainProof, NamesAPortDown) {
  ProofSide client =
      MakeProofSide(ProofCause::kRetryExceeded,
                    CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 8, 0, 7, "DOWN")),
                    ClientPath("02:00:0a:63:00:01"));
  client.netdev = "veth1";
  ProofSide server = MakeProofSide(
      ProofCause::kNoCompletion,
      CounterDelta(Counters("rxe0", 0, 0, 0), Counters("rxe0", 0, 0, 0, "DOWN")), ServerPath());
  ProofVerdict v = ExplainProof(client, server);
  EXPECT_TRUE(v.path_broken);
  EXPECT_NE(v.text.find("rxe1 sent 8 packets to 10.99.0.1 and rxe0 received none: rxe1 port 1 "
                        "is DOWN (veth1 down?)"),
            std::string::npos)
      << v.text;
}

// As measured in the lab: rxe completes a SEND on a port gone DOWN with
// IBV_WC_LOC_QP_OP_ERR at once; a DOWN port is a path loss whatever the status.
TEST(ExplainProof, APortDownIsAPathLossWhateverTheStatus) {
  ProofSide client = MakeProofSide(
      ProofCause::kLocalQpOperation,
      CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 4582, 4578, 2, "DOWN")),
      ClientPath("02:00:0a:63:00:01"));
  ProofSide server = MakeProofSide(
      ProofCause::kPeerFailed,
      CounterDelta(Counters("rxe0", 0, 0, 0), Counters("rxe0", 4578, 4578, 0, "DOWN")),
      ServerPath());
  ProofVerdict v = ExplainProof(server, client);
  EXPECT_TRUE(v.path_broken);
  EXPECT_EQ(v.cause, ProofCause::kLocalQpOperation);
  EXPECT_NE(v.text.find("rxe1 sent 4582 packets to 10.99.0.1 and rxe0 received 4578: rxe1 port 1 "
                        "is DOWN"),
            std::string::npos)
      << v.text;
}

// As the lab saw it once: the link went down between two packets, so every
// packet sent had arrived; the DOWN port is still the cause, and named.
TEST(ExplainProof, APortDownIsNamedWhenEveryPacketArrived) {
  ProofSide server = MakeProofSide(
      ProofCause::kPeerFailed,
      CounterDelta(Counters("rxe0", 0, 0, 0), Counters("rxe0", 4939, 4939, 1, "DOWN")),
      ServerPath());
  server.netdev = "veth0";
  ProofSide client = MakeProofSide(
      ProofCause::kLocalQpOperation,
      CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 4939, 4939, 0, "DOWN")),
      ClientPath("02:00:0a:63:00:01"));
  ProofVerdict v = ExplainProof(server, client);
  EXPECT_TRUE(v.path_broken);
  EXPECT_NE(v.text.find("the packets arrive, but rxe0 port 1 is DOWN (veth0 down?)"),
            std::string::npos)
      << v.text;
}

// As the lab saw it once: the fault is on the peer's direction (237 lost),
// while this side's own shows the 4 packets in flight when both stopped.
TEST(ExplainProof, NamesTheDirectionThatLostMore) {
  ProofSide server = MakeProofSide(
      ProofCause::kNoCompletion,
      CounterDelta(Counters("rxe0", 0, 0, 0), Counters("rxe0", 6799, 6678, 0)), ServerPath());
  ProofSide client =
      MakeProofSide(ProofCause::kNoCompletion,
                    CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 6915, 6795, 0)),
                    ClientPath("02:00:0a:63:00:01"));
  ProofVerdict v = ExplainProof(server, client);
  EXPECT_NE(v.text.find("rxe1 sent 6915 packets to 10.99.0.1 and rxe0 received 6678"),
            std::string::npos)
      << v.text;
}

TEST(ExplainProof, PacketsThatArriveAreNotAPathLoss) {
  ProofSide client =
      MakeProofSide(ProofCause::kRetryExceeded,
                    CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 8, 0, 7)),
                    ClientPath("02:00:0a:63:00:01"));
  PortCounters after = Counters("rxe0", 0, 8, 0);
  after.values[2].second = 8;  // out_of_seq_request: a PSN mismatch
  ProofSide server = MakeProofSide(ProofCause::kPeerFailed,
                                   CounterDelta(Counters("rxe0", 0, 0, 0), after), ServerPath());
  ProofVerdict v = ExplainProof(client, server);
  EXPECT_FALSE(v.path_broken);
  EXPECT_NE(v.text.find("rxe1 sent 8 packets and rxe0 received 8: the packets arrive, and rxe0 "
                        "discarded 8 packets"),
            std::string::npos)
      << v.text;
}

TEST(ExplainProof, AloneWhenThePeerDidNotAnswer) {
  ProofSide client = MakeProofSide(
      ProofCause::kNoCompletion, CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 8, 0, 0)),
      ClientPath("02:00:00:00:00:99"));
  ProofVerdict v = ExplainProof(client, std::nullopt);
  EXPECT_FALSE(v.path_broken);  // a stopped or vanished peer looks the same
  EXPECT_EQ(v.counters.size(), 1u);
  EXPECT_NE(v.text.find("rxe1 sent 8 packets to 10.99.0.1; the peer's counters are unknown (it "
                        "did not answer): the neighbour entry for 10.99.0.1 on veth1 is "
                        "02:00:00:00:00:99 PERMANENT"),
            std::string::npos)
      << v.text;
}

TEST(ExplainProof, RnrIsNotAPathLoss) {
  ProofSide client =
      MakeProofSide(ProofCause::kRnrRetryExceeded,
                    CounterDelta(Counters("rxe1", 0, 0, 0), Counters("rxe1", 8, 8, 0)),
                    ClientPath("02:00:0a:63:00:01"));
  ProofVerdict v = ExplainProof(client, std::nullopt);
  EXPECT_FALSE(v.path_broken);
  EXPECT_EQ(v.text.rfind("rnr-retry-exceeded (the receiver was not ready", 0), 0u) << v.text;
}

TEST(ProofCause, NamesRoundTrip) {
  for (ProofCause c :
       {ProofCause::kRetryExceeded, ProofCause::kRnrRetryExceeded, ProofCause::kRemoteAccess,
        ProofCause::kRemoteInvalidRequest, ProofCause::kRemoteOperation,
        ProofCause::kLocalProtection, ProofCause::kLocalLength, ProofCause::kResponseTimeout,
        ProofCause::kFlushed, ProofCause::kOtherStatus, ProofCause::kNoCompletion,
        ProofCause::kPeerFailed}) {
    EXPECT_EQ(ProofCauseFromName(ProofCauseName(c)), c) << ProofCauseName(c);
  }
  EXPECT_TRUE(IsPathCause(ProofCause::kRetryExceeded));
  EXPECT_TRUE(IsPathCause(ProofCause::kNoCompletion));
  EXPECT_FALSE(IsPathCause(ProofCause::kRemoteAccess));
}

}  // namespace
}  // namespace qpconnect
