// SPDX-License-Identifier: MIT
// PlanConnection(): the attributes derived from two endpoint descriptions.
#include "qpconnect/plan.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace qpconnect::test {
namespace {

TEST(PlanConnection, PairsEachQpWithThePeersQpAtTheSamePosition) {
  Pair p = IbPair(Transport::kRc, 3);
  const ConnectionPlan plan = PlanConnection(p.local, p.remote);
  ASSERT_EQ(plan.qps.size(), 3u);
  EXPECT_EQ(plan.transport, Transport::kRc);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plan.qps[i].qp_num, p.local.qps[i].qpn);
    EXPECT_EQ(plan.qps[i].sq_psn, p.local.qps[i].psn);
    EXPECT_EQ(plan.qps[i].dest_qp_num, p.remote.qps[i].qpn);
    EXPECT_EQ(plan.qps[i].rq_psn, p.remote.qps[i].psn);
  }
}

TEST(PlanConnection, ProducesMinCountWhenQpCountsDiffer) {
  EndpointInfo a = IbEndpoint(Transport::kRc, 0, 4);
  EndpointInfo b = IbEndpoint(Transport::kRc, 1, 2);
  EXPECT_EQ(PlanConnection(a, b).qps.size(), 2u);
  EXPECT_EQ(PlanConnection(b, a).qps.size(), 2u);
}

TEST(PlanConnection, NegotiatesTheSmallestKnownMtu) {
  Pair p = IbPair(Transport::kRc);
  p.local.path.path_mtu = Mtu::k4096;
  p.remote.path.path_mtu = Mtu::k2048;
  p.local.port.active_mtu = Mtu::k4096;
  p.remote.port.active_mtu = Mtu::kInvalid;  // unknown: ignored
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].path_mtu, Mtu::k2048);
  p.local.port.active_mtu = Mtu::k512;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].path_mtu, Mtu::k512);
  // The same on both sides: the negotiation is symmetric.
  EXPECT_EQ(PlanConnection(p.remote, p.local).qps[0].path_mtu, Mtu::k512);
}

TEST(PlanConnection, FallsBackTo1024WhenNoMtuIsKnown) {
  Pair p = IbPair(Transport::kRc);
  p.local.path.path_mtu = p.remote.path.path_mtu = Mtu::kInvalid;
  p.local.port.active_mtu = p.remote.port.active_mtu = Mtu::kInvalid;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].path_mtu, Mtu::k1024);
}

TEST(PlanConnection, ForcedMtuWins) {
  Pair p = IbPair(Transport::kRc);
  p.local.path.path_mtu = Mtu::k256;
  p.local.path.path_mtu_forced = true;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].path_mtu, Mtu::k256);
}

// One MTU knob: a side that describes its MTU forced (qp-connect -m, qp-mesh
// -m, the C API's open and adopt options' mtu) programs it whatever the SA's
// path says; a side that negotiates takes the smaller of the negotiated MTU
// and the SA's.
TEST(PlanConnection, AForcedDescriptionWinsOverTheSaPath) {
  Pair p = IbPair(Transport::kRc);
  p.local.path.path_mtu = p.remote.path.path_mtu = Mtu::k4096;
  p.local.port.active_mtu = p.remote.port.active_mtu = Mtu::k4096;
  PlanOptions o;
  o.sa_path = PathRecord{};
  o.sa_path->mtu = Mtu::k1024;
  EXPECT_EQ(PlanConnection(p.local, p.remote, o).qps[0].path_mtu, Mtu::k1024);  // negotiated
  p.local.path.path_mtu_forced = true;
  EXPECT_EQ(PlanConnection(p.local, p.remote, o).qps[0].path_mtu, Mtu::k4096);
}

TEST(PlanConnection, ASideThatNegotiatesFollowsAPeerThatForced) {
  Pair p = IbPair(Transport::kRc);
  p.local.path.path_mtu = p.local.port.active_mtu = Mtu::k4096;
  p.remote.path.path_mtu = Mtu::k1024;
  p.remote.path.path_mtu_forced = true;  // the peer ran qp-connect -m 1024
  p.remote.port.active_mtu = Mtu::k4096;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].path_mtu, Mtu::k1024);
  EXPECT_EQ(PlanConnection(p.remote, p.local).qps[0].path_mtu, Mtu::k1024);
}

TEST(PlanConnection, TwoSidesForcingDifferentMtusKeepTheirOwn) {
  Pair p = IbPair(Transport::kRc);
  p.local.path.path_mtu = Mtu::k1024;
  p.remote.path.path_mtu = Mtu::k256;
  p.local.path.path_mtu_forced = p.remote.path.path_mtu_forced = true;
  // Each programs its own: the validator then reports mtu-mismatch.
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].path_mtu, Mtu::k1024);
  EXPECT_EQ(PlanConnection(p.remote, p.local).qps[0].path_mtu, Mtu::k256);
}

TEST(PlanConnection, DlidIsThePeersSourceLid) {
  Pair p = IbPair(Transport::kRc);
  p.remote.port.lid = 8;
  p.remote.port.lmc = 2;
  p.remote.path.src_path_bits = 3;
  p.local.path.src_path_bits = 0;
  ConnectionPlan plan = PlanConnection(p.local, p.remote);
  EXPECT_EQ(plan.qps[0].ah.dlid, 11);
  EXPECT_EQ(plan.qps[0].ah.src_path_bits, 0);
  // Path bits beyond the LMC are not part of the SLID the hardware sends from.
  p.remote.path.src_path_bits = 4;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].ah.dlid, 8);
}

TEST(PlanConnection, UsesNoGrhOnOneInfiniBandSubnet) {
  Pair p = IbPair(Transport::kRc);
  const AddressVector ah = PlanConnection(p.local, p.remote).qps[0].ah;
  EXPECT_FALSE(ah.is_global);
  EXPECT_EQ(ah.port_num, 1);
  EXPECT_EQ(ah.hop_limit, 1);
}

TEST(PlanConnection, UsesGrhAcrossSubnetsWhenAskedAndOnRoce) {
  Pair p = IbPair(Transport::kRc);
  p.remote.port.subnet_prefix = 0xfec0000000000000ULL;
  EXPECT_TRUE(PlanConnection(p.local, p.remote).qps[0].ah.is_global);

  p = IbPair(Transport::kRc);
  p.local.path.use_grh = true;
  EXPECT_TRUE(PlanConnection(p.local, p.remote).qps[0].ah.is_global);

  Pair r = RocePair(Transport::kRc);
  r.local.path.use_grh = false;
  const AddressVector ah = PlanConnection(r.local, r.remote).qps[0].ah;
  EXPECT_TRUE(ah.is_global);
  EXPECT_EQ(ah.dgid, r.remote.path.sgid->gid);
  EXPECT_EQ(ah.sgid_index, 3);
  EXPECT_EQ(ah.hop_limit, 64);
  EXPECT_EQ(ah.dlid, 0);
}

TEST(PlanConnection, HopLimitDefaultsByTransportAndLinkAndCanBeForced) {
  Pair ud = IbPair(Transport::kUd);
  EXPECT_EQ(PlanConnection(ud.local, ud.remote).qps[0].ah.hop_limit, 64);
  Pair rc = IbPair(Transport::kRc);
  rc.local.path.hop_limit = 5;  // a larger stated hop limit is kept
  EXPECT_EQ(PlanConnection(rc.local, rc.remote).qps[0].ah.hop_limit, 5);
  PlanOptions o;
  o.hop_limit = 2;
  EXPECT_EQ(PlanConnection(rc.local, rc.remote, o).qps[0].ah.hop_limit, 2);
}

TEST(PlanConnection, CopiesKeysDepthsAndOptions) {
  Pair p = IbPair(Transport::kUd);
  p.local.keys.pkey_index = 3;
  p.local.keys.qkey = 0x1234;
  p.local.keys.remote_qkey = 0x5678;
  p.local.rd_atomic.max_rd_atomic = 4;
  p.local.rd_atomic.max_dest_rd_atomic = 8;
  p.local.path.sl = 2;
  p.local.path.traffic_class = 0x20;
  p.local.path.flow_label = 0x12345;
  PlanOptions o;
  o.timeout = 20;
  o.retry_cnt = 5;
  o.rnr_retry = 6;
  o.min_rnr_timer = 14;
  o.message_size = 512;
  const ConnectionPlan plan = PlanConnection(p.local, p.remote, o);
  const QpAttrs& a = plan.qps[0];
  EXPECT_EQ(plan.transport, Transport::kUd);
  EXPECT_EQ(plan.message_size, 512u);
  EXPECT_EQ(a.pkey_index, 3);
  EXPECT_EQ(a.qkey, 0x1234u);
  EXPECT_EQ(a.remote_qkey, 0x5678u);
  EXPECT_EQ(a.max_rd_atomic, 4);
  EXPECT_EQ(a.max_dest_rd_atomic, 8);
  EXPECT_EQ(a.timeout, 20);
  EXPECT_EQ(a.retry_cnt, 5);
  EXPECT_EQ(a.rnr_retry, 6);
  EXPECT_EQ(a.min_rnr_timer, 14);
  EXPECT_EQ(a.ah.sl, 2);
  EXPECT_EQ(a.ah.traffic_class, 0x20);
  EXPECT_EQ(a.ah.flow_label, 0x12345u);
}

TEST(PlanConnection, LeavesDgidZeroWhenThePeerPublishesNoGid) {
  Pair p = RocePair(Transport::kRc);
  p.remote.path.sgid.reset();
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].ah.dgid, Gid{});
}

// ---- issue 12: the planner agrees with its validator

// Puts the two sides of an InfiniBand pair on two routed subnets (site-local
// prefixes fec0:0:0:1::/64 and fec0:0:0:2::/64).
void TwoSubnets(Pair& p) {
  p.local.port.subnet_prefix = 0xfec0000000000001ULL;
  p.local.gid_table = {Entry(0, "fec0:0:0:1::a", GidType::kIb)};
  p.local.path.sgid = p.local.gid_table[0];
  p.remote.port.subnet_prefix = 0xfec0000000000002ULL;
  p.remote.gid_table = {Entry(0, "fec0:0:0:2::b", GidType::kIb)};
  p.remote.path.sgid = p.remote.gid_table[0];
}

TEST(PlanConnection, RoutesAcrossInfiniBandSubnetsWithAHopLimitAboveOne) {
  Pair p = IbPair(Transport::kRc);
  TwoSubnets(p);
  const AddressVector ah = PlanConnection(p.local, p.remote).qps[0].ah;
  EXPECT_TRUE(ah.is_global);
  EXPECT_EQ(ah.hop_limit, 64);
  p.WithPlans();
  EXPECT_FALSE(HasId(p.Run(), "hop-limit-too-low")) << Dump(p.Run());
}

TEST(PlanConnection, NegotiatesRdAtomicToWhatThePeerAcceptsAndTheDevicesAllow) {
  Pair p = IbPair(Transport::kRc);
  p.local.rd_atomic.max_rd_atomic = 16;
  p.remote.rd_atomic.max_dest_rd_atomic = 4;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].max_rd_atomic, 4);
  p.remote.rd_atomic.max_dest_rd_atomic = 0;  // the peer accepts no reads
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].max_rd_atomic, 0);
  p.remote.rd_atomic.max_dest_rd_atomic = 16;
  p.local.rd_atomic.device_max_qp_init_rd_atom = 2;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].max_rd_atomic, 2);
  p.local.rd_atomic.max_dest_rd_atomic = 32;
  p.local.rd_atomic.device_max_qp_rd_atom = 8;
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].max_dest_rd_atomic, 8);
  p.local.rd_atomic.device_max_qp_rd_atom = 0;  // unknown: no cap
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].max_dest_rd_atomic, 32);
  // UC has no reads: copied as given.
  Pair uc = IbPair(Transport::kUc);
  uc.local.rd_atomic.max_rd_atomic = 16;
  uc.remote.rd_atomic.max_dest_rd_atomic = 1;
  EXPECT_EQ(PlanConnection(uc.local, uc.remote).qps[0].max_rd_atomic, 16);
}

TEST(PlanConnection, KeepsAGidIndexAbove255WholeForTheValidator) {
  Pair p = RocePair(Transport::kRc);
  p.local.gid_table.push_back(Entry(257, "::ffff:10.0.0.1", GidType::kRoceV2));
  p.local.path.sgid = p.local.gid_table.back();
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps[0].ah.sgid_index, 257);
  EXPECT_TRUE(HasId(p.Run(), "sgid-index-too-large"));
}

// Property: every clean pair of descriptions, across transports, link layers
// (one IB subnet, two IB subnets, RoCE), QP counts, MTUs, rd_atomic depths and
// device limits, yields a plan the validator finds nothing in.
TEST(PlanConnection, PlansOfCleanPairsRaiseNoFinding) {
  size_t cases = 0;
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    for (int link = 0; link < 3; ++link) {
      for (size_t qps : {size_t{1}, size_t{3}, size_t{64}}) {
        for (Mtu mtu : {Mtu::k256, Mtu::k1024, Mtu::k4096}) {
          for (uint8_t depth : {uint8_t{0}, uint8_t{1}, uint8_t{4}, uint8_t{16}}) {
            for (uint32_t device_limit : {0u, 2u, 16u}) {
              Pair p = link == 2 ? RocePair(t, qps) : IbPair(t, qps);
              if (link == 1) TwoSubnets(p);
              p.local.port.active_mtu = mtu;  // the sides' MTUs differ
              p.local.path.path_mtu = mtu;
              p.local.rd_atomic.max_rd_atomic = depth;
              p.local.rd_atomic.max_dest_rd_atomic = static_cast<uint8_t>(depth + 1);
              p.remote.rd_atomic.max_rd_atomic = static_cast<uint8_t>(depth * 2);
              p.remote.rd_atomic.max_dest_rd_atomic = depth;
              for (EndpointInfo* e : {&p.local, &p.remote}) {
                e->rd_atomic.device_max_qp_rd_atom = device_limit;
                e->rd_atomic.device_max_qp_init_rd_atom = device_limit;
              }
              PlanOptions o;
              o.message_size = 256;  // fits every MTU (UD)
              p.local_plan = PlanConnection(p.local, p.remote, o);
              p.remote_plan = PlanConnection(p.remote, p.local, o);
              const auto findings = p.Run();
              ++cases;
              ASSERT_TRUE(Problems(findings).empty())
                  << TransportName(t) << " link " << link << " qps " << qps << " mtu "
                  << MtuBytes(mtu) << " depth " << int{depth} << " limit " << device_limit << "\n"
                  << Dump(findings);
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3u * 3 * 3 * 3 * 4 * 3);
}

}  // namespace
}  // namespace qpconnect::test
