// PairObservedQps() (qpconnect/observe/pairing.h): mutual QPNs, loopback, ambiguity
// resolved by address, PSN continuity and names, one-sided and UD pairs,
// dangling and unpaired QPs.
#include "qpconnect/observe/pairing.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace qpconnect {
namespace {

Gid G(const char* text) { return GidFromString(text).value_or(Gid{}); }

// A connected RC QP on (host, device) whose table holds `gid`; it aims at
// `dgid` when one is given.
ObservedQp Qp(const std::string& host, const std::string& device, uint32_t qpn,
              std::optional<uint32_t> dest, const char* gid, const char* dgid = nullptr) {
  ObservedQp q;
  q.host = host;
  q.device = device;
  q.qpn = qpn;
  q.transport = Transport::kRc;
  q.dest_qpn = dest;
  EndpointInfo e;
  GidEntry entry;
  entry.index = 1;
  entry.gid = G(gid);
  entry.type = GidType::kRoceV2;
  e.gid_table = {entry};
  q.endpoint = e;
  QpAttrs a;
  a.qp_num = qpn;
  if (dgid != nullptr) {
    a.ah.is_global = true;
    a.ah.dgid = G(dgid);
  }
  q.applied = a;
  return q;
}

ObservedQp Ud(const std::string& host, uint32_t qpn, const char* gid, const char* ah_dgid) {
  ObservedQp q = Qp(host, "rxe0", qpn, std::nullopt, gid);
  q.transport = Transport::kUd;
  if (ah_dgid != nullptr) {
    AddressVector av;
    av.is_global = true;
    av.dgid = G(ah_dgid);
    q.address_handles.push_back(av);
  }
  return q;
}

TEST(Pairing, PairsMutualQpnsAndNamesTheAddressEvidence) {
  Observation o;
  o.qps = {Qp("a", "rxe0", 17, 17, "::ffff:10.0.0.1", "::ffff:10.0.0.2"),
           Qp("b", "rxe0", 17, 17, "::ffff:10.0.0.2", "::ffff:10.0.0.1")};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].a, 0u);
  EXPECT_EQ(p.pairs[0].b, 1u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + gid");
  EXPECT_TRUE(p.dangling.empty());
  EXPECT_TRUE(p.unpaired.empty());
  EXPECT_TRUE(p.ambiguous.empty());
}

TEST(Pairing, PairsTwoQpsOfOneDeviceLoopback) {
  Observation o;
  o.qps = {Qp("a", "rxe0", 17, 18, "::ffff:10.0.0.1", "::ffff:10.0.0.1"),
           Qp("a", "rxe0", 18, 17, "::ffff:10.0.0.1", "::ffff:10.0.0.1")};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + gid");
}

TEST(Pairing, ResolvesRepeatedQpnsByTheGidAimedAt) {
  // QPN 17 exists on two hosts; A's address vector names host c's GID.
  Observation o;
  o.qps = {Qp("a", "rxe0", 17, 17, "::ffff:10.0.0.1", "::ffff:10.0.0.3"),
           Qp("b", "rxe0", 17, 17, "::ffff:10.0.0.2", "::ffff:10.0.0.1"),
           Qp("c", "rxe0", 17, 17, "::ffff:10.0.0.3", "::ffff:10.0.0.1")};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].a, 0u);
  EXPECT_EQ(p.pairs[0].b, 2u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + gid");
  ASSERT_EQ(p.dangling.size(), 1u);  // b aims at a, which is taken
  EXPECT_EQ(p.dangling[0], 1u);
}

TEST(Pairing, LeavesEquallyGoodCandidatesAmbiguous) {
  // Nothing but QPNs: a names 17, and both 17s name a.
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 17, "::ffff:10.0.0.1"), Qp("b", "rxe0", 17, 5, "::ffff:10.0.0.2"),
           Qp("c", "rxe0", 17, 5, "::ffff:10.0.0.3")};
  const Pairing p = PairObservedQps(o);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.ambiguous, (std::vector<size_t>{0, 1, 2}));
}

TEST(Pairing, BreaksATieByHostThenDevice) {
  // Same evidence; b is on a's host, c on another host.
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 17, "::ffff:10.0.0.1"), Qp("a", "rxe1", 17, 5, "::ffff:10.0.0.2"),
           Qp("c", "rxe0", 17, 5, "::ffff:10.0.0.3")};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].b, 2u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + host/device names");
  EXPECT_EQ(p.dangling, (std::vector<size_t>{1}));
}

TEST(Pairing, PrefersNoEvidenceOverAContradiction) {
  // a aims at 10.0.0.9: b's table lacks it (contradiction), c's is unknown.
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 17, "::ffff:10.0.0.1", "::ffff:10.0.0.9"),
           Qp("b", "rxe0", 17, 5, "::ffff:10.0.0.2"), Qp("c", "rxe0", 17, 5, "::ffff:10.0.0.3")};
  o.qps[2].endpoint->gid_table.clear();
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].b, 2u);
}

TEST(Pairing, UsesPsnContinuityBetweenSnapshotSamples) {
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 17, "::1"), Qp("b", "rxe0", 17, 5, "::2"),
           Qp("c", "rxe0", 17, 5, "::3")};
  for (ObservedQp& q : o.qps) {
    q.endpoint.reset();
    q.applied.reset();
    q.source = ObservedSource::kSnapshot;
  }
  ObservedSample s;
  s.sq_psn = 1000;
  s.rq_psn = 2000;
  o.qps[0].samples = {s};
  s.sq_psn = 2001;
  s.rq_psn = 1000;
  o.qps[2].samples = {s};
  s.sq_psn = 0x800000;
  s.rq_psn = 0x900000;
  o.qps[1].samples = {s};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].b, 2u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + psn continuity");
}

TEST(Pairing, DanglingWhenTheNamedQpIsAbsent) {
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 99, "::1"), Qp("b", "rxe0", 6, std::nullopt, "::2")};
  const Pairing p = PairObservedQps(o);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.dangling, (std::vector<size_t>{0}));
  EXPECT_EQ(p.unpaired, (std::vector<size_t>{1}));
}

TEST(Pairing, PairsOneSidedWhenThePeerNeverSetItsDestination) {
  // a's RTR named b; b never got that far (its program failed first).
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 6, "::1", "::2"), Qp("b", "rxe1", 6, std::nullopt, "::2")};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].how, "one-sided qpn (the peer never set dest_qp_num) + gid");
}

TEST(Pairing, OneSidedNeedsAUniqueClaimant) {
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 7, "::1"), Qp("b", "rxe0", 6, 7, "::2"),
           Qp("c", "rxe0", 7, std::nullopt, "::3")};
  const Pairing p = PairObservedQps(o);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.dangling, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(p.unpaired, (std::vector<size_t>{2}));
}

TEST(Pairing, PairsUdQpsWhoseAddressHandlesNameEachOther) {
  Observation o;
  o.qps = {Ud("a", 17, "::ffff:10.0.0.1", "::ffff:10.0.0.2"),
           Ud("b", 17, "::ffff:10.0.0.2", "::ffff:10.0.0.1"),
           Ud("c", 18, "::ffff:10.0.0.3", nullptr)};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].a, 0u);
  EXPECT_EQ(p.pairs[0].b, 1u);
  EXPECT_EQ(p.pairs[0].how, "ud address handles + gid");
  EXPECT_EQ(p.unpaired, (std::vector<size_t>{2}));
}

TEST(Pairing, PairsAUdSenderWithAReceiverThatMadeNoAddressHandle) {
  Observation o;
  o.qps = {Ud("a", 17, "::ffff:10.0.0.1", "::ffff:10.0.0.2"),
           Ud("b", 17, "::ffff:10.0.0.2", nullptr)};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].how, "ud address handles + gid");
}

TEST(Pairing, LeavesUdQpsWithoutAddressHandlesUnpaired) {
  Observation o;
  o.qps = {Ud("a", 17, "::ffff:10.0.0.1", nullptr), Ud("b", 17, "::ffff:10.0.0.2", nullptr)};
  const Pairing p = PairObservedQps(o);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.unpaired, (std::vector<size_t>{0, 1}));
}

TEST(Pairing, PairsEachQpAtMostOnce) {
  // Two connections between the same two processes: 1<->2 and 3<->4.
  Observation o;
  o.qps = {Qp("a", "rxe0", 1, 2, "::1"), Qp("b", "rxe0", 2, 1, "::2"), Qp("a", "rxe0", 3, 4, "::1"),
           Qp("b", "rxe0", 4, 3, "::2")};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 2u);
  EXPECT_EQ(p.pairs[0].a, 0u);
  EXPECT_EQ(p.pairs[0].b, 1u);
  EXPECT_EQ(p.pairs[1].a, 2u);
  EXPECT_EQ(p.pairs[1].b, 3u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn");
}

}  // namespace
}  // namespace qpconnect
