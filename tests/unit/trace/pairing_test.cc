// SPDX-License-Identifier: MIT
// PairObservedQps() (qpconnect/observe/pairing.h): mutual QPNs, loopback, ambiguity
// resolved by address and PSN continuity (never by names), one-sided and UD
// pairs, dangling and unpaired QPs; and snapshots of a job whose QP numbers
// repeat on every host, told apart by each host's identity and each QP's
// destination address.
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

TEST(Pairing, NamesDoNotBreakATie) {
  // Same evidence; b is on a's host, c on another host. At scale the same
  // names repeat on every host: names tell nothing, so all three are ambiguous.
  Observation o;
  o.qps = {Qp("a", "rxe0", 5, 17, "::ffff:10.0.0.1"), Qp("a", "rxe1", 17, 5, "::ffff:10.0.0.2"),
           Qp("c", "rxe0", 17, 5, "::ffff:10.0.0.3")};
  const Pairing p = PairObservedQps(o);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.ambiguous, (std::vector<size_t>{0, 1, 2}));
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
  EXPECT_FALSE(p.pairs[0].unique);  // chosen among two
  EXPECT_EQ(p.pairs[0].candidates, 2u);
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

// ---- snapshots of several hosts, QP numbers repeating -------------------

// Host "hN" has one port whose GID is ::ffff:10.0.0.N.
ObservedHost Host(int n, const std::string& job = "") {
  ObservedHost h;
  h.name = "h" + std::to_string(n);
  h.job = job;
  PortIdentity p;
  p.device = "mlx5_0";
  p.port = 1;
  p.gids = {G(("::ffff:10.0.0." + std::to_string(n)).c_str())};
  h.ports = {p};
  return h;
}

// A snapshot QP on host hN aimed at host hD (D < 0: no destination known).
ObservedQp Snap(int n, uint32_t qpn, uint32_t dest, int d, uint32_t sq = 1000, uint32_t rq = 2000) {
  ObservedQp q;
  q.source = ObservedSource::kSnapshot;
  q.host = "h" + std::to_string(n);
  q.device = "mlx5_0";
  q.port = 1;
  q.qpn = qpn;
  q.dest_qpn = dest;
  q.transport = Transport::kRc;
  q.type_name = "RC";
  q.state = "RTS";
  if (d >= 0) q.dest_gid = G(("::ffff:10.0.0." + std::to_string(d)).c_str());
  ObservedSample s;
  s.state = "RTS";
  s.sq_psn = sq;
  s.rq_psn = rq;
  q.samples = {s, s};
  q.samples[1].at_seconds = 1;
  return q;
}

TEST(PairingAtScale, RepeatedQpnsArePairedByDestinationAddress) {
  // h0 QP 5 <-> h1 QP 17 and h2 QP 5 <-> h3 QP 17: the same QP numbers, PSNs
  // that tell nothing (all continuous); the destinations tell them apart.
  Observation o;
  o.hosts = {Host(0), Host(1), Host(2), Host(3)};
  o.qps = {Snap(0, 5, 17, 1, 100, 100), Snap(1, 17, 5, 0, 100, 100), Snap(2, 5, 17, 3, 100, 100),
           Snap(3, 17, 5, 2, 100, 100)};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 2u);
  EXPECT_EQ(p.pairs[0].a, 0u);
  EXPECT_EQ(p.pairs[0].b, 1u);
  EXPECT_EQ(p.pairs[1].a, 2u);
  EXPECT_EQ(p.pairs[1].b, 3u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + gid + psn continuity");
  EXPECT_TRUE(p.pairs[0].unique);
  EXPECT_TRUE(p.ambiguous.empty());

  // Without destinations the same four are ambiguous: nothing is judged.
  for (ObservedQp& q : o.qps) q.dest_gid.reset();
  const Pairing blind = PairObservedQps(o);
  EXPECT_TRUE(blind.pairs.empty());
  EXPECT_EQ(blind.ambiguous, (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(PairingAtScale, ADeadPeerLeavesItsPartnerDanglingNotPairedElsewhere) {
  // h0 QP 5 aims at h1 QP 17, which is gone (its process was killed); h2 QP
  // 17 names QP 5 too, but aims at h3, whose QP 5 points back.
  Observation o;
  o.hosts = {Host(0), Host(1), Host(2), Host(3)};
  o.qps = {Snap(0, 5, 17, 1), Snap(2, 17, 5, 3, 300, 400), Snap(3, 5, 17, 2, 400, 300)};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].a, 1u);
  EXPECT_EQ(p.pairs[0].b, 2u);
  EXPECT_EQ(p.dangling, (std::vector<size_t>{0}));
  EXPECT_FALSE(p.NamedBy(0).has_value());  // h1 has no QP 17: a peer in no input

  // Two partners of dead processes with mirrored QP numbers: each aims at
  // its own dead peer, so they are not a (PSN-skewed) pair of each other.
  Observation two;
  two.hosts = {Host(0), Host(1), Host(2), Host(3)};
  two.qps = {Snap(0, 5, 17, 1, 100, 9000000), Snap(2, 17, 5, 3, 5000000, 700)};
  const Pairing q = PairObservedQps(two);
  EXPECT_TRUE(q.pairs.empty());
  EXPECT_EQ(q.dangling, (std::vector<size_t>{0, 1}));
}

TEST(PairingAtScale, APsnSkewedPairIsStillPairedByAddress) {
  Observation o;
  o.hosts = {Host(0), Host(1), Host(2)};
  // h0 QP 5 <-> h1 QP 17, PSNs far apart both ways; h2 QP 17 names QP 5 too
  // (and aims at h0) but h0 QP 5 aims at h1.
  o.qps = {Snap(0, 5, 17, 1, 100, 5000000), Snap(1, 17, 5, 0, 9000000, 12000000),
           Snap(2, 17, 5, 0, 5000000, 100)};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].a, 0u);
  EXPECT_EQ(p.pairs[0].b, 1u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + gid");
  EXPECT_TRUE(p.pairs[0].unique);  // h2's QP aims at h0 but h0's aims at h1
  EXPECT_EQ(p.dangling, (std::vector<size_t>{2}));
  EXPECT_EQ(p.NamedBy(2), std::optional<size_t>(0));  // connected to another
}

TEST(PairingAtScale, TwoCandidatesThatTieAreAmbiguousAndNotJudged) {
  // h0 QP 5 (no destination known) and two QP 17s pointing back, both with
  // PSN continuity: nothing tells them apart.
  Observation o;
  o.hosts = {Host(0), Host(1), Host(2)};
  o.qps = {Snap(0, 5, 17, -1, 100, 100), Snap(1, 17, 5, -1, 100, 100),
           Snap(2, 17, 5, -1, 100, 100)};
  const Pairing p = PairObservedQps(o);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.ambiguous, (std::vector<size_t>{0, 1, 2}));
}

TEST(PairingAtScale, OneDirectionsPsnsDoNotPairWhenTheOtherContradicts) {
  // h0 QP 5 and h2 QP 17 are two partners of dead processes (h1 QP 17, h3 QP
  // 5, absent): h0's sends fall within the window of h2's receive PSN by
  // chance, but h2's sends are far from what h0 expects. h4 QP 17 has no PSN
  // in common with h0 either way. Nothing supports a pair.
  Observation o;
  o.hosts = {Host(0), Host(1), Host(2), Host(3), Host(4)};
  o.qps = {Snap(0, 5, 17, -1, 1000, 9000000), Snap(2, 17, 5, -1, 5000000, 1500),
           Snap(4, 17, 5, -1, 12000000, 3000000)};
  const Pairing p = PairObservedQps(o);
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.ambiguous, (std::vector<size_t>{0, 1, 2}));

  // Each other's only candidate, they are still paired (a real pair with a
  // PSN fault is judged as one), by their QP numbers alone.
  o.qps.pop_back();
  const Pairing only = PairObservedQps(o);
  ASSERT_EQ(only.pairs.size(), 1u);
  EXPECT_EQ(only.pairs[0].how, "mutual qpn");
  EXPECT_TRUE(only.pairs[0].unique);
}

TEST(PairingAtScale, PsnsCloseBothWaysTellCandidatesApart) {
  // h0 QP 5's true peer h1 QP 17 is a few PSNs behind each way; h2 QP 17 is
  // within the window both ways, but thousands of PSNs off.
  Observation o;
  o.hosts = {Host(0), Host(1), Host(2)};
  o.qps = {Snap(0, 5, 17, -1, 100000, 700000), Snap(1, 17, 5, -1, 700010, 99990),
           Snap(2, 17, 5, -1, 730000, 130000)};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].b, 1u);
  EXPECT_EQ(p.pairs[0].how, "mutual qpn + psn continuity");
  EXPECT_EQ(p.pairs[0].candidates, 2u);
  // h2's QP names the one QP 5 there is, paired elsewhere.
  EXPECT_EQ(p.dangling, (std::vector<size_t>{2}));
  EXPECT_EQ(p.NamedBy(2), std::optional<size_t>(0));
}

// Pair k of a job without destinations: QP `a` on host ha <-> QP `b` on host
// hb, PSNs of their own (base k * 1,000,000), close both ways.
void AddPair(Observation& o, int k, int ha, uint32_t a, int hb, uint32_t b) {
  const uint32_t base = 1000000u * static_cast<uint32_t>(k + 1);
  o.qps.push_back(Snap(ha, a, b, -1, base, base + 500000));
  o.qps.push_back(Snap(hb, b, a, -1, base + 500000, base));
}

TEST(PairingAtScale, DanglingByEliminationWhenEveryCandidateIsPairedElsewhere) {
  // h0 QP 5's peer, h1 QP 17, is gone. The three QPs numbered 17 that name
  // QP 5 back (on h0, h2, h3) are paired with other QPs 5, and every host
  // given but h1 holds a QP 17: by elimination, the peer was on h1.
  Observation o;
  o.hosts = {Host(0), Host(1), Host(2), Host(3)};
  o.qps = {Snap(0, 5, 17, -1, 9000000, 12000000)};
  AddPair(o, 0, 1, 5, 2, 17);
  AddPair(o, 1, 3, 5, 0, 17);
  AddPair(o, 2, 2, 5, 3, 17);
  const Pairing p = PairObservedQps(o);
  EXPECT_EQ(p.pairs.size(), 3u);
  EXPECT_TRUE(p.ambiguous.empty());
  EXPECT_EQ(p.dangling, (std::vector<size_t>{0}));
  ASSERT_EQ(p.eliminated.size(), 1u);
  EXPECT_EQ(p.eliminated[0].qp, 0u);
  EXPECT_EQ(p.eliminated[0].back, 3u);
  EXPECT_EQ(p.eliminated[0].numbered, 3u);
  EXPECT_EQ(p.eliminated[0].host, "h1");
  EXPECT_FALSE(p.NamedBy(0).has_value());
  ASSERT_NE(p.Eliminated(0), nullptr);
  EXPECT_EQ(p.Eliminated(1), nullptr);

  // A host given that holds no QP at all could have held it too: no host.
  o.hosts.push_back(Host(4));
  const Pairing two = PairObservedQps(o);
  ASSERT_EQ(two.eliminated.size(), 1u);
  EXPECT_EQ(two.eliminated[0].host, "");

  // A QP 17 in no pair (aimed at QP 99) may be the peer, misconnected: then
  // nothing is eliminated, and h0's QP 5 stays ambiguous.
  o.qps.push_back(Snap(1, 17, 99, -1, 4000, 4000));
  const Pairing free = PairObservedQps(o);
  EXPECT_TRUE(free.eliminated.empty());
  EXPECT_EQ(free.ambiguous, (std::vector<size_t>{0}));
}

TEST(PairingAtScale, AnotherJobIsNeverAPeer) {
  Observation o;
  o.hosts = {Host(0, "job-a"), Host(1, "job-b"), Host(2, "job-a")};
  o.qps = {Snap(0, 5, 17, -1, 100, 100), Snap(1, 17, 5, -1, 100, 100),
           Snap(2, 17, 5, -1, 100, 100)};
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].b, 2u);
  EXPECT_TRUE(p.pairs[0].unique);
}

TEST(PairingAtScale, ALargeGroupIsSearchedByPsn) {
  // 200 hosts, the same (5, 17) pair on each: hosts 2k and 2k+1 connected,
  // each pair's PSNs its own; no destinations.
  Observation o;
  for (int h = 0; h < 200; ++h) o.hosts.push_back(Host(h));
  for (int k = 0; k < 100; ++k) {
    const uint32_t base = static_cast<uint32_t>(k) * 100000u;
    o.qps.push_back(Snap(2 * k, 5, 17, -1, base + 10, base + 50010));
    o.qps.push_back(Snap(2 * k + 1, 17, 5, -1, base + 50010, base + 10));
  }
  const Pairing p = PairObservedQps(o);
  ASSERT_EQ(p.pairs.size(), 100u);
  for (const ObservedPair& pair : p.pairs) {
    EXPECT_EQ(pair.b, pair.a + 1);
    EXPECT_EQ(pair.how, "mutual qpn + psn continuity");
    EXPECT_FALSE(pair.unique);
  }
}

}  // namespace
}  // namespace qpconnect
