// SPDX-License-Identifier: MIT
// Validate(): rule-by-rule behaviour beyond the table-driven walk - the
// passing side of each rule's edge, both directions, unknown facts, and scale.
#include "qpconnect/validate.h"

#include <gtest/gtest.h>

#include <chrono>

#include "fixtures.h"
#include "violations.h"

namespace qpconnect::test {
namespace {

std::vector<Finding> Violate(const std::string& id, Transport t) {
  return Violations().at(id).make(t).Run();
}

// ---- P_Key

TEST(Validate, FlagsPkeyOfAnotherPartitionOnEveryTransport) {
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    const auto f = Violate("pkey-mismatch", t);
    const Finding* p = FindId(f, "pkey-mismatch");
    ASSERT_NE(p, nullptr) << TransportName(t);
    EXPECT_EQ(p->attribute, "pkey");
    EXPECT_EQ(p->direction, Direction::kBoth);
    EXPECT_EQ(p->local_value, "0x8001 (full)");
    EXPECT_EQ(p->remote_value, "0xffff (full)");
  }
}

TEST(Validate, AcceptsPkeysDifferingOnlyInMembership) {
  Pair p = IbPair(Transport::kRc);
  p.local.keys.pkey = 0x7fff;  // limited member of the default partition
  EXPECT_TRUE(Problems(p.Run()).empty());
}

TEST(Validate, FlagsTwoLimitedMembers) {
  EXPECT_TRUE(HasId(Violate("pkey-no-full-member", Transport::kUd), "pkey-no-full-member"));
}

TEST(Validate, ReportsUnstatedPkeyAsUnchecked) {
  Pair p = IbPair(Transport::kRc);
  p.remote.keys.pkey = 0;
  const auto f = p.Run();
  EXPECT_TRUE(Problems(f).empty());
  const Finding* u = FindId(f, "pkey-mismatch");
  ASSERT_NE(u, nullptr);
  EXPECT_TRUE(u->unchecked);
  EXPECT_EQ(u->severity, Severity::kInfo);
  EXPECT_EQ(u->direction, Direction::kRemote);
}

// The hard-coded-index bug: both sides publish partition 0x8001, found at
// index 1 of their P_Key tables, but the local QPs apply index 0.
Pair HardCodedPkeyIndex(size_t qps) {
  Pair p = IbPair(Transport::kRc, qps);
  for (EndpointInfo* e : {&p.local, &p.remote}) {
    e->keys.pkey = 0x8001;
    e->keys.pkey_index = 1;
  }
  p.WithPlans();
  for (QpAttrs& q : p.local_plan->qps) q.pkey_index = 0;
  return p;
}

TEST(Validate, FlagsAppliedPkeyIndexOtherThanPublished) {
  const auto f = HardCodedPkeyIndex(1).Run();
  const Finding* e = FindId(f, "pkey-index-not-published");
  ASSERT_NE(e, nullptr) << Dump(f);
  EXPECT_EQ(e->severity, Severity::kError);
  EXPECT_EQ(e->attribute, "pkey_index");
  EXPECT_EQ(e->direction, Direction::kLocal);
  EXPECT_EQ(e->qp_index, 0u);
  EXPECT_EQ(e->local_value, "applied 0, published 1");
  EXPECT_NE(e->message.find("P_Key 0x8001 (full) at index 1"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("partition 0x0001"), std::string::npos) << e->message;
  EXPECT_EQ(Problems(f), (std::set<std::string>{"pkey-index-not-published"})) << Dump(f);
}

TEST(Validate, SaysThePkeyAtAnAppliedIndexIsUnknown) {
  const auto f = HardCodedPkeyIndex(1).Run();
  // Never silence: the P_Key rules say they could not judge the local side.
  for (const char* id : {"pkey-mismatch", "pkey-no-full-member"}) {
    const Finding* u = FindId(f, id);
    ASSERT_NE(u, nullptr) << id << "\n" << Dump(f);
    EXPECT_TRUE(u->unchecked) << FindingToString(*u);
    EXPECT_EQ(u->direction, Direction::kLocal);
    EXPECT_EQ(u->attribute, "pkey_index");
    EXPECT_NE(u->message.find("apply pkey_index 0"), std::string::npos) << u->message;
  }
  // Even when the published P_Keys disagree, a P_Key nobody applies is not judged.
  Pair p = HardCodedPkeyIndex(1);
  p.remote.keys.pkey = 0x8002;
  EXPECT_FALSE(HasId(p.Run(), "pkey-mismatch")) << Dump(p.Run());
}

TEST(Validate, MergesTheHardCodedPkeyIndexOverQps) {
  const auto f = HardCodedPkeyIndex(5).Run();
  size_t n = 0;
  for (const Finding& x : f) {
    if (x.id != "pkey-index-not-published") continue;
    ++n;
    EXPECT_EQ(x.more_qps, 4u) << FindingToString(x);
  }
  EXPECT_EQ(n, 1u) << Dump(f);
}

TEST(Validate, JudgesTheSaPathPkeyOnlyWhenTheAppliedIndexIsPublished) {
  Pair p = HardCodedPkeyIndex(1);
  p.sa_path = AgreeingSaPath(p);
  const auto f = p.Run();
  const Finding* u = FindId(f, "pkey-not-sa-path");
  ASSERT_NE(u, nullptr) << Dump(f);
  EXPECT_TRUE(u->unchecked);
}

// ---- PSN and QPN

TEST(Validate, FlagsRqPsnNotEqualToPeerSqPsn) {
  const auto f = Violate("psn-mismatch", Transport::kRc);
  const Finding* p = FindId(f, "psn-mismatch");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->attribute, "rq_psn");
  EXPECT_EQ(p->direction, Direction::kLocal);
  EXPECT_EQ(p->qp_index, 0u);
  EXPECT_EQ(p->local_value, "0x000123");
  EXPECT_EQ(p->remote_value, "0x002000");
}

TEST(Validate, ChecksPsnInTheRemoteToLocalDirectionToo) {
  Pair p = IbPair(Transport::kUc);
  p.WithPlans().remote_plan->qps[0].rq_psn = 0x42;
  const auto all_f = p.Run();
  const Finding* f = FindId(all_f, "psn-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->direction, Direction::kRemote);
  EXPECT_EQ(f->local_value, "0x001000");   // the local sq_psn
  EXPECT_EQ(f->remote_value, "0x000042");  // the remote rq_psn
}

TEST(Validate, FlagsPeerProgrammingAnotherPsnThanItPublished) {
  Pair p = IbPair(Transport::kRc);
  p.WithPlans().remote_plan->qps[0].sq_psn = 0x777;  // the local rq_psn is the published 0x2000
  const auto all_f = p.Run();
  const Finding* f = FindId(all_f, "psn-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->direction, Direction::kLocal);
  EXPECT_NE(f->fix.find("published PSN 0x002000"), std::string::npos) << f->fix;
}

TEST(Validate, IgnoresPsnOnUd) {
  EXPECT_FALSE(HasId(Violate("psn-mismatch", Transport::kUd), "psn-mismatch"));
}

TEST(Validate, FlagsSwappedRecords) {
  // Each side programs its own QPN and PSN as the peer's: the classic mix-up.
  Pair p = IbPair(Transport::kRc);
  p.WithPlans();
  p.local_plan->qps[0].dest_qp_num = p.local.qps[0].qpn;
  p.local_plan->qps[0].rq_psn = p.local.qps[0].psn;
  const auto ids = Problems(p.Run());
  EXPECT_TRUE(ids.count("qpn-mismatch"));
  EXPECT_TRUE(ids.count("psn-mismatch"));
}

TEST(Validate, NamesRemoteQpnForUd) {
  const auto all_f = Violate("qpn-mismatch", Transport::kUd);
  const Finding* f = FindId(all_f, "qpn-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attribute, "remote_qpn");
}

TEST(Validate, FlagsPsnAndQpnBeyond24Bits) {
  for (Transport t : {Transport::kRc, Transport::kUd}) {
    EXPECT_TRUE(HasId(Violate("psn-out-of-range", t), "psn-out-of-range"));
    EXPECT_TRUE(HasId(Violate("qpn-out-of-range", t), "qpn-out-of-range"));
  }
  Pair p = IbPair(Transport::kRc);
  p.local.qps[0].psn = 0xffffff;  // the largest valid PSN
  p.local.qps[0].qpn = 0xffffff;
  EXPECT_TRUE(Problems(p.Run()).empty());
}

TEST(Validate, FlagsPlanRqPsnBeyond24Bits) {
  Pair p = IbPair(Transport::kRc);
  p.WithPlans().local_plan->qps[0].rq_psn = 0x1002000;
  const auto f = p.Run();
  const Finding* r = nullptr;
  for (const Finding& x : f) {
    if (x.id == "psn-out-of-range" && x.attribute == "rq_psn") r = &x;
  }
  ASSERT_NE(r, nullptr) << Dump(f);
  EXPECT_TRUE(HasId(f, "psn-mismatch"));
}

TEST(Validate, FlagsUnequalQpCountsOnce) {
  const auto f = Violate("qp-count-mismatch", Transport::kRc);
  const Finding* c = FindId(f, "qp-count-mismatch");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->local_value, "2");
  EXPECT_EQ(c->remote_value, "1");
  EXPECT_EQ(c->severity, Severity::kWarning);
}

// ---- MTU

TEST(Validate, FlagsPathMtuMismatch) {
  const auto all_f = Violate("mtu-mismatch", Transport::kRc);
  const Finding* f = FindId(all_f, "mtu-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attribute, "path_mtu");
  EXPECT_EQ(f->local_value, "1024");
  EXPECT_EQ(f->remote_value, "4096");
}

TEST(Validate, AcceptsDifferentStatedMtusThatNegotiateDown) {
  Pair p = IbPair(Transport::kRc);
  p.local.path.path_mtu = Mtu::k4096;
  p.remote.path.path_mtu = Mtu::k1024;
  EXPECT_TRUE(Problems(p.Run()).empty());
}

TEST(Validate, FlagsMtuAboveLocalActive) {
  const auto all_f = Violate("mtu-above-active", Transport::kUc);
  const Finding* f = FindId(all_f, "mtu-above-active");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->direction, Direction::kLocal);
}

TEST(Validate, FlagsMtuAboveRemoteActive) {
  Pair p = IbPair(Transport::kRc);
  p.remote.port.active_mtu = Mtu::k1024;
  p.WithPlans();
  p.local_plan->qps[0].path_mtu = Mtu::k2048;
  p.remote_plan->qps[0].path_mtu = Mtu::k2048;
  const auto f = p.Run();
  const Finding* a = FindId(f, "mtu-above-peer-active");
  ASSERT_NE(a, nullptr) << Dump(f);
  EXPECT_EQ(a->direction, Direction::kLocal);
  EXPECT_EQ(a->local_value, "2048");
  EXPECT_EQ(a->remote_value, "active 1024");
}

TEST(Validate, ReportsUnknownActiveMtuAsUnchecked) {
  Pair p = IbPair(Transport::kRc);
  p.remote.port.active_mtu = Mtu::kInvalid;
  const auto f = p.Run();
  EXPECT_TRUE(Problems(f).empty()) << Dump(f);
  const Finding* u = FindId(f, "mtu-above-peer-active");
  ASSERT_NE(u, nullptr);
  EXPECT_TRUE(u->unchecked);
}

TEST(Validate, FlagsUdMessageAboveMtu) {
  const auto all_f = Violate("ud-message-exceeds-mtu", Transport::kUd);
  const Finding* f = FindId(all_f, "ud-message-exceeds-mtu");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->local_value, "8192");
  Pair p = IbPair(Transport::kUd);
  p.WithPlans().local_plan->message_size = 4096;  // exactly the MTU
  EXPECT_FALSE(HasId(p.Run(), "ud-message-exceeds-mtu"));
}

TEST(Validate, IgnoresPathMtuOnUd) {
  EXPECT_FALSE(HasId(Violate("mtu-mismatch", Transport::kUd), "mtu-mismatch"));
}

// ---- RDMA read/atomic depth

TEST(Validate, FlagsRdAtomicAbovePeerDestRdAtomic) {
  const auto all_f = Violate("rd-atomic-exceeds-peer", Transport::kRc);
  const Finding* f = FindId(all_f, "rd-atomic-exceeds-peer");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attribute, "max_rd_atomic");
  EXPECT_EQ(f->direction, Direction::kLocal);
}

TEST(Validate, AcceptsRdAtomicEqualToPeer) {
  Pair p = IbPair(Transport::kRc);
  p.local.rd_atomic.max_rd_atomic = 8;
  p.remote.rd_atomic.max_dest_rd_atomic = 8;
  EXPECT_TRUE(Problems(p.Run()).empty());
}

TEST(Validate, FlagsRdAtomicAboveDeviceLimits) {
  EXPECT_TRUE(
      HasId(Violate("rd-atomic-exceeds-device", Transport::kRc), "rd-atomic-exceeds-device"));
  EXPECT_TRUE(HasId(Violate("dest-rd-atomic-exceeds-device", Transport::kRc),
                    "dest-rd-atomic-exceeds-device"));
  EXPECT_FALSE(HasId(Violate("rd-atomic-exceeds-peer", Transport::kUc), "rd-atomic-exceeds-peer"));
}

// ---- Address vector

TEST(Validate, AcceptsDlidWithinThePeersLmcRange) {
  Pair p = IbPair(Transport::kRc);
  p.remote.port.lid = 8;
  p.remote.port.lmc = 2;  // LIDs 8..11
  p.remote.path.src_path_bits = 2;
  const auto f = p.Run();
  EXPECT_TRUE(Problems(f).empty()) << Dump(f);
  EXPECT_EQ(p.WithPlans().local_plan->qps[0].ah.dlid, 10);
}

TEST(Validate, FlagsDlidOutsideThePeersLids) {
  const auto all_f = Violate("dlid-not-peer-lid", Transport::kUd);
  const Finding* f = FindId(all_f, "dlid-not-peer-lid");
  ASSERT_NE(f, nullptr);
  // LIDs read as QPNs and PSNs do: hex, with the decimal alongside.
  EXPECT_EQ(f->local_value, "0x0007 (7)");
  EXPECT_EQ(f->remote_value, "LID 0x0002 (2)");
  EXPECT_NE(f->message.find("dlid 0x0007 (7)"), std::string::npos) << f->message;
  EXPECT_NE(f->fix.find("base LID 0x0002 (2)"), std::string::npos) << f->fix;
}

TEST(Validate, PrintsLidRangesInHex) {
  Pair p = IbPair(Transport::kRc);
  p.remote.port.lid = 0x10;
  p.remote.port.lmc = 2;  // LIDs 0x10..0x13
  p.WithPlans().local_plan->qps[0].ah.dlid = 0x20;
  const auto all_f = p.Run();
  const Finding* f = FindId(all_f, "dlid-not-peer-lid");
  ASSERT_NE(f, nullptr) << Dump(all_f);
  EXPECT_EQ(f->remote_value, "LIDs 0x0010..0x0013 (16..19, LMC 2)");
}

TEST(Validate, SkipsDlidCheckOnRoutedPaths) {
  Pair p = IbPair(Transport::kRc);
  p.local.port.subnet_prefix = 0xfec0000000000000ULL;
  p.local.gid_table = {Entry(0, "fec0::a", GidType::kIb)};
  p.local.path.sgid = p.local.gid_table[0];
  p.remote.port.subnet_prefix = 0xfec0000000000001ULL;
  p.remote.gid_table = {Entry(0, "fec0::1:0:0:0:b", GidType::kIb)};
  p.remote.path.sgid = p.remote.gid_table[0];
  p.WithPlans();
  p.local_plan->qps[0].ah.dlid = 99;  // a router's LID
  p.remote_plan->qps[0].ah.dlid = 98;
  p.local_plan->qps[0].ah.hop_limit = 8;
  p.remote_plan->qps[0].ah.hop_limit = 8;
  const auto f = p.Run();
  EXPECT_TRUE(Problems(f).empty()) << Dump(f);
}

TEST(Validate, FlagsPeerDlidNotMySourceLid) {
  const auto all_f = Violate("slid-not-peer-dlid", Transport::kRc);
  const Finding* f = FindId(all_f, "slid-not-peer-dlid");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->local_value, "src_path_bits 1, SLID 0x0005 (5)");
  EXPECT_EQ(f->remote_value, "dlid 0x0004 (4)");
  EXPECT_FALSE(HasId(Violate("slid-not-peer-dlid", Transport::kUd), "slid-not-peer-dlid"));
}

TEST(Validate, FlagsAhPortOtherThanQpPort) {
  EXPECT_TRUE(HasId(Violate("ah-port-mismatch", Transport::kUd), "ah-port-mismatch"));
}

TEST(Validate, FlagsDgidMissingFromPeerGidTable) {
  const auto all_f = Violate("dgid-not-in-peer-table", Transport::kRc);
  const Finding* f = FindId(all_f, "dgid-not-in-peer-table");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->local_value, "::ffff:10.0.0.99");
  EXPECT_NE(f->fix.find("::ffff:10.0.0.2"), std::string::npos);
}

TEST(Validate, ReportsEmptyPeerGidTableAsUnchecked) {
  Pair p = RocePair(Transport::kRc);
  p.remote.gid_table.clear();
  p.remote.path.sgid.reset();
  p.local.path.sgid = p.local.gid_table[3];
  const auto f = p.Run();
  // The local side then has no dgid at all: that is an error of its own.
  EXPECT_TRUE(HasId(f, "dgid-zero"));
  const Finding* u = FindId(f, "sgid-index-not-in-table");
  ASSERT_NE(u, nullptr);
  EXPECT_TRUE(u->unchecked);
}

TEST(Validate, FlagsMulticastUdDestinationAsWarning) {
  const auto all_f = Violate("ud-multicast-destination", Transport::kUd);
  const Finding* f = FindId(all_f, "ud-multicast-destination");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  Pair p = IbPair(Transport::kUd);
  p.WithPlans().local_plan->qps[0].ah.is_global = true;
  p.local_plan->qps[0].ah.dgid = G("ff12:401b::1");
  const auto all_g = p.Run();
  const Finding* g = FindId(all_g, "ud-multicast-destination");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->attribute, "dgid");
}

TEST(Validate, FlagsMulticastDlidOnRcAsNotThePeers) {
  EXPECT_TRUE(HasId(Violate("ud-multicast-destination", Transport::kRc), "dlid-not-peer-lid"));
}

// ---- RoCE

TEST(Validate, FlagsMissingGrhOnRoce) {
  const auto all_f = Violate("grh-required", Transport::kRc);
  const Finding* f = FindId(all_f, "grh-required");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attribute, "is_global");
}

TEST(Validate, FlagsMissingGrhWhenThePortRequiresIt) {
  Pair p = IbPair(Transport::kRc);
  p.local.port.grh_required = true;
  EXPECT_TRUE(HasId(p.Run(), "grh-required"));
}

TEST(Validate, FlagsRoceV1AgainstV2) {
  const auto f = Violate("gid-type-mismatch", Transport::kRc);
  const Finding* g = FindId(f, "gid-type-mismatch");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->attribute, "sgid_index");
  EXPECT_EQ(g->local_value, "2 ::ffff:10.0.0.1 (roce-v1, ipv4)");
  EXPECT_EQ(g->remote_value, "3 ::ffff:10.0.0.2 (roce-v2, ipv4)");
}

TEST(Validate, FlagsIpv4AgainstIpv6Gid) {
  EXPECT_TRUE(HasId(Violate("gid-family-mismatch", Transport::kUd), "gid-family-mismatch"));
}

TEST(Validate, AcceptsLinkLocalGidsOnBothSides) {
  Pair p = RocePair(Transport::kRc);
  p.local.path.sgid = p.local.gid_table[1];
  p.remote.path.sgid = p.remote.gid_table[1];
  EXPECT_TRUE(Problems(p.Run()).empty());
}

TEST(Validate, FlagsLinkLocalGidTowardsAnotherSubnet) {
  EXPECT_TRUE(
      HasId(Violate("link-local-across-subnets", Transport::kRc), "link-local-across-subnets"));
}

TEST(Validate, FlagsHopLimitOneTowardsAnotherSubnet) {
  EXPECT_TRUE(HasId(Violate("hop-limit-too-low", Transport::kRc), "hop-limit-too-low"));
  Pair p = RocePair(Transport::kRc);
  p.WithPlans().local_plan->qps[0].ah.hop_limit = 1;  // same /24: fine
  EXPECT_TRUE(Problems(p.Run()).empty());
}

TEST(Validate, HopLimitFixFitsTheLink) {
  const auto roce = Violate("hop-limit-too-low", Transport::kRc);
  const Finding* r = FindId(roce, "hop-limit-too-low");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->fix.find("RoCE default"), std::string::npos) << r->fix;

  // InfiniBand GIDs of two subnets (an IB router between them), hop limit 1.
  Pair p = IbPair(Transport::kRc);
  p.local.port.subnet_prefix = 0xfec0000000000000ULL;
  p.local.gid_table = {Entry(0, "fec0::a", GidType::kIb)};
  p.local.path.sgid = p.local.gid_table[0];
  p.remote.port.subnet_prefix = 0xfec0000000000001ULL;
  p.remote.gid_table = {Entry(0, "fec0::1:0:0:0:b", GidType::kIb)};
  p.remote.path.sgid = p.remote.gid_table[0];
  p.WithPlans().local_plan->qps[0].ah.hop_limit = 1;
  const auto ib = p.Run();
  const Finding* f = FindId(ib, "hop-limit-too-low");
  ASSERT_NE(f, nullptr) << Dump(ib);
  EXPECT_EQ(f->fix.find("RoCE"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("qp-info --path"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("InfiniBand"), std::string::npos) << f->fix;
}

TEST(Validate, ReportsAPeerThatPublishedNoGidAsSuch) {
  // The remote publishes its table but no GID it sends from. Its derived
  // plan's sgid_index 0 (a RoCE v1 GID here) is the planner's default, not a
  // fact: no GID type mismatch is blamed on it.
  Pair p = RocePair(Transport::kRc);
  p.remote.path.sgid.reset();
  const auto f = p.Run();
  EXPECT_FALSE(HasId(f, "gid-type-mismatch")) << Dump(f);
  EXPECT_FALSE(HasId(f, "gid-family-mismatch")) << Dump(f);
  EXPECT_FALSE(HasId(f, "sgid-index-not-in-table")) << Dump(f);
  const Finding* type = FindId(f, "gid-type-mismatch");
  ASSERT_NE(type, nullptr) << Dump(f);
  EXPECT_TRUE(type->unchecked);
  EXPECT_EQ(type->direction, Direction::kRemote);
  EXPECT_NE(type->message.find("remote side published no GID"), std::string::npos) << type->message;
  // The missing GID itself is the error, on the side that did not publish it.
  const Finding* dgid = FindId(f, "dgid-zero");
  ASSERT_NE(dgid, nullptr) << Dump(f);
  EXPECT_EQ(dgid->severity, Severity::kError);
  EXPECT_EQ(dgid->direction, Direction::kRemote);
  EXPECT_EQ(dgid->attribute, "sgid");
  EXPECT_NE(dgid->message.find("remote side published no GID"), std::string::npos) << dgid->message;
  EXPECT_EQ(Problems(f), (std::set<std::string>{"dgid-zero"})) << Dump(f);
}

TEST(Validate, NamesThePeerWithoutGidAlsoWhenTheLocalPlanIsGiven) {
  // qp-connect's own case: its plan is given, the peer's description has no GID.
  Pair p = RocePair(Transport::kRc);
  p.remote.path.sgid.reset();
  p.local_plan = PlanConnection(p.local, p.remote);
  const auto f = p.Run();
  const Finding* dgid = FindId(f, "dgid-zero");
  ASSERT_NE(dgid, nullptr) << Dump(f);
  EXPECT_EQ(dgid->direction, Direction::kRemote);
  EXPECT_NE(dgid->message.find("remote side published no GID"), std::string::npos) << dgid->message;
}

TEST(Validate, JudgesTheAppliedSgidOfASideThatPublishedNoGid) {
  // With a dump's plan, the sgid_index is what the side applied: judged.
  Pair p = RocePair(Transport::kRc);
  p.WithPlans().remote_plan->qps[0].ah.sgid_index = 2;  // RoCE v1
  p.remote.path.sgid.reset();
  EXPECT_TRUE(HasId(p.Run(), "gid-type-mismatch")) << Dump(p.Run());
}

TEST(Validate, FlagsAllZeroSgidAndDgid) {
  EXPECT_TRUE(HasId(Violate("sgid-zero", Transport::kRc), "sgid-zero"));
  EXPECT_TRUE(HasId(Violate("dgid-zero", Transport::kUd), "dgid-zero"));
}

TEST(Validate, FlagsPingpongPeerWithoutGidOnRoce) {
  Pair p = RocePair(Transport::kRc);
  p.remote.path.sgid = Entry(0, "::", GidType::kUnspecified);  // pingpong without -g
  EXPECT_TRUE(HasId(p.Run(), "dgid-zero"));
}

// ---- Q_Key

TEST(Validate, FlagsQkeyMismatchOnUd) {
  const auto f = Violate("qkey-mismatch", Transport::kUd);
  const Finding* q = FindId(f, "qkey-mismatch");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->attribute, "qkey");
  EXPECT_EQ(q->local_value, "0x22222222");
  EXPECT_EQ(q->remote_value, "0x11111111");
}

TEST(Validate, AcceptsQkeyMismatchWithRemoteQkeyOverride) {
  Pair p = IbPair(Transport::kUd);
  p.local.keys.qkey = 0x22222222;
  p.local.keys.remote_qkey = 0x11111111;  // what the local side puts in its send WRs
  p.remote.keys.remote_qkey = 0x22222222;
  EXPECT_TRUE(Problems(p.Run()).empty());
}

TEST(Validate, FlagsRemoteQkeyOverrideThatIsWrong) {
  Pair p = IbPair(Transport::kUd);
  p.local.keys.remote_qkey = 0x33333333;
  const auto all_q = p.Run();
  const Finding* q = FindId(all_q, "qkey-mismatch");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->attribute, "remote_qkey");
}

TEST(Validate, IgnoresQkeyOnConnectedTransports) {
  EXPECT_FALSE(HasId(Violate("qkey-mismatch", Transport::kRc), "qkey-mismatch"));
}

// ---- Local sanity

TEST(Validate, FlagsDownPortAndMissingSm) {
  EXPECT_TRUE(HasId(Violate("port-not-active", Transport::kRc), "port-not-active"));
  EXPECT_TRUE(HasId(Violate("lid-zero", Transport::kUd), "lid-zero"));
}

TEST(Validate, AcceptsLidZeroOnRoce) {
  EXPECT_TRUE(Problems(RocePair(Transport::kRc).Run()).empty());
}

TEST(Validate, WarnsAboutInfiniteTimeoutAndSlowRnrTimer) {
  const auto all_t = Violate("timeout-infinite", Transport::kRc);
  const Finding* t = FindId(all_t, "timeout-infinite");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->severity, Severity::kWarning);
  const auto all_r = Violate("min-rnr-timer-zero", Transport::kRc);
  const Finding* r = FindId(all_r, "min-rnr-timer-zero");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_FALSE(HasId(Violate("timeout-infinite", Transport::kUc), "timeout-infinite"));
}

TEST(Validate, FlagsDifferentTransports) {
  const auto all_f = Violate("transport-mismatch", Transport::kUd);
  const Finding* f = FindId(all_f, "transport-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->local_value, "ud");
  EXPECT_EQ(f->remote_value, "rc");
}

// ---- Unknown facts (the pingpong dialect carries no MTU, P_Key, port state)

TEST(Validate, ReportsUnknownFactsAsInfoNotErrors) {
  Pair p = IbPair(Transport::kRc);
  EndpointInfo& r = p.remote;
  r.port.link_layer = LinkLayer::kUnspecified;
  r.port.active = false;
  r.port.active_mtu = Mtu::kInvalid;
  r.port.max_mtu = Mtu::kInvalid;
  r.port.subnet_prefix = 0;
  r.path.path_mtu = Mtu::kInvalid;
  r.keys.pkey = 0;
  r.gid_table.clear();
  r.path.sgid = Entry(0, "::", GidType::kUnspecified);
  r.rd_atomic.device_max_qp_rd_atom = 0;
  r.rd_atomic.device_max_qp_init_rd_atom = 0;
  const auto f = p.Run();
  EXPECT_FALSE(HasErrors(f)) << Dump(f);
  EXPECT_TRUE(Problems(f).empty()) << Dump(f);
  std::set<std::string> unchecked;
  for (const Finding& x : f) {
    EXPECT_EQ(x.severity, Severity::kInfo);
    EXPECT_TRUE(x.unchecked);
    unchecked.insert(x.id);
  }
  for (const char* id : {"link-layer-mismatch", "port-not-active", "pkey-mismatch",
                         "mtu-above-peer-active", "rd-atomic-exceeds-device"}) {
    EXPECT_TRUE(unchecked.count(id)) << id << "\n" << Dump(f);
  }
}

// ---- Scale and presentation

TEST(Validate, ReportsPortLevelProblemsOnceForManyQps) {
  constexpr size_t kQps = 10000;
  Pair p = IbPair(Transport::kRc, kQps);
  p.WithPlans();
  for (QpAttrs& a : p.local_plan->qps) a.path_mtu = Mtu::k1024;
  const auto start = std::chrono::steady_clock::now();
  const auto f = p.Run();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(f.size(), 1u) << Dump(f);
  EXPECT_EQ(f[0].id, "mtu-mismatch");
  EXPECT_EQ(f[0].qp_index, 0u);
  EXPECT_EQ(f[0].more_qps, kQps - 1);
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(Validate, CapsDistinctPerQpFindingsAndSummarizesTheRest) {
  constexpr size_t kQps = 10000;
  Pair p = IbPair(Transport::kRc, kQps);
  p.WithPlans();
  for (QpAttrs& a : p.local_plan->qps) a.rq_psn = (a.rq_psn + 1) & kPsnMask;  // off by one
  ValidateOptions o;
  o.max_listed_per_rule = 5;
  const auto f = p.Run(o);
  size_t listed = 0;
  const Finding* summary = nullptr;
  for (const Finding& x : f) {
    ASSERT_EQ(x.id, "psn-mismatch");
    if (x.qp_index)
      ++listed;
    else
      summary = &x;
  }
  EXPECT_EQ(listed, 5u);
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(summary->more_qps, kQps - 5);
  EXPECT_EQ(summary->severity, Severity::kError);
}

TEST(Validate, ListsErrorsBeforeWarningsBeforeInfo) {
  Pair p = IbPair(Transport::kRc);
  p.WithPlans();
  p.local_plan->qps[0].timeout = 0;          // warning
  p.local_plan->qps[0].rq_psn = 0x5;         // error
  p.remote.port.active_mtu = Mtu::kInvalid;  // info
  const auto f = p.Run();
  ASSERT_GE(f.size(), 3u);
  for (size_t i = 1; i < f.size(); ++i) {
    EXPECT_GE(static_cast<int>(f[i - 1].severity), static_cast<int>(f[i].severity)) << Dump(f);
  }
  EXPECT_EQ(f.front().severity, Severity::kError);
  EXPECT_EQ(f.back().severity, Severity::kInfo);
}

TEST(FindingToString, NamesSeverityIdAttributeSideQpValuesAndFix) {
  const auto f = Violate("psn-mismatch", Transport::kRc);
  const std::string s = FindingToString(*FindId(f, "psn-mismatch"));
  EXPECT_EQ(s.rfind("error psn-mismatch rq_psn [local, qp 0]: ", 0), 0u) << s;
  EXPECT_NE(s.find("(local=0x000123 remote=0x002000)"), std::string::npos) << s;
  EXPECT_NE(s.find("; fix: set rq_psn to 0x002000"), std::string::npos) << s;
}

TEST(TransportSet, ListsMembersInOrder) {
  EXPECT_EQ(kAllTransports.ToString(), "rc,uc,ud");
  EXPECT_EQ((TransportSet{Transport::kUd, Transport::kRc}).ToString(), "rc,ud");
  EXPECT_TRUE(TransportSet{}.empty());
}

}  // namespace
}  // namespace qpconnect::test
