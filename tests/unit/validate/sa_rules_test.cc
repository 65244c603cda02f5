// SPDX-License-Identifier: MIT
// rules_sa.cc: the local plan against the SA's PathRecord (issue 19). The
// catalogue tests give each rule its violating fixture (violations.h); these
// check the silence around them and the values reported.
#include <gtest/gtest.h>

#include <algorithm>

#include "fixtures.h"
#include "qpconnect/validate.h"
#include "violations.h"

namespace qpconnect::test {
namespace {

const Finding* Find(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings) {
    if (f.id == id && !f.unchecked) return &f;
  }
  return nullptr;
}

TEST(SaRules, AnAgreeingPathRaisesNothing) {
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    Pair p = IbPair(t, 3);
    p.sa_path = AgreeingSaPath(p);
    const auto findings = p.Run();
    EXPECT_TRUE(Problems(findings).empty()) << Dump(findings);
  }
}

TEST(SaRules, SilentWithoutAPathOrOnRoce) {
  Pair ib = IbPair(Transport::kRc);
  EXPECT_TRUE(Problems(ib.Run()).empty());
  Pair roce = RocePair(Transport::kRc);
  PathRecord r;
  r.mtu = Mtu::k256;
  r.sl = 5;
  r.hop_limit = 9;
  r.pkey = 0x8001;
  roce.sa_path = r;  // RoCE has no SA: a PathRecord there is not judged
  EXPECT_TRUE(Problems(roce.Run()).empty()) << Dump(roce.Run());
}

TEST(SaRules, MtuAbovePathNamesBothMtusPerQp) {
  Pair p = IbPair(Transport::kRc, 2);
  p.sa_path = AgreeingSaPath(p);
  p.sa_path->mtu = Mtu::k512;
  const auto findings = p.Run();
  const Finding* f = Find(findings, "mtu-above-sa-path");
  ASSERT_NE(f, nullptr) << Dump(findings);
  EXPECT_EQ(f->remote_value, "SA 512");
  EXPECT_NE(f->fix.find("-m 512"), std::string::npos) << f->fix;
  // The SA's MTU at or above the plan's: nothing.
  p.sa_path->mtu = Mtu::k4096;
  EXPECT_EQ(Find(p.Run(), "mtu-above-sa-path"), nullptr);
}

TEST(SaRules, PkeyComparesThePartitionNotTheMembershipBit) {
  Pair p = IbPair(Transport::kUd);
  p.sa_path = AgreeingSaPath(p);
  p.sa_path->pkey = static_cast<uint16_t>(p.local.keys.pkey & 0x7fff);  // limited member
  EXPECT_EQ(Find(p.Run(), "pkey-not-sa-path"), nullptr);
}

TEST(SaRules, GrhWithTooLowHopLimitAcrossRouters) {
  Pair p = IbPair(Transport::kRc);
  p.WithPlans();
  p.local_plan->qps[0].ah.is_global = true;
  p.local_plan->qps[0].ah.hop_limit = 1;
  p.sa_path = AgreeingSaPath(p);
  p.sa_path->hop_limit = 3;
  const auto findings = p.Run();
  const Finding* f = Find(findings, "grh-missing-across-routers");
  ASSERT_NE(f, nullptr) << Dump(findings);
  EXPECT_EQ(f->local_value, "GRH hop limit 1");
  p.local_plan->qps[0].ah.hop_limit = 3;
  EXPECT_EQ(Find(p.Run(), "grh-missing-across-routers"), nullptr);
}

TEST(PlanWithSaPath, TakesDlidSlMtuAndAckTimeoutAndSaysSo) {
  Pair p = IbPair(Transport::kRc);
  PathRecord sa = AgreeingSaPath(p);
  sa.mtu = Mtu::k2048;  // the ports are at 4096; a link between is not
  sa.sl = 3;
  sa.packet_lifetime = 18;
  PlanOptions options;
  options.sa_path = sa;
  const ConnectionPlan plan = PlanConnection(p.local, p.remote, options);
  ASSERT_EQ(plan.qps.size(), 1u);
  EXPECT_EQ(plan.qps[0].path_mtu, Mtu::k2048);
  EXPECT_EQ(plan.qps[0].ah.sl, 3);
  EXPECT_EQ(plan.qps[0].ah.dlid, sa.dlid);
  EXPECT_EQ(plan.qps[0].timeout, 19);
  EXPECT_FALSE(plan.qps[0].ah.is_global);
  EXPECT_EQ(plan.from_sa, (std::vector<std::string>{"dlid", "sl", "path_mtu", "timeout"}));
  // Without the SA: the guesses (port MTU, SL 0, timeout 14), nothing from the SA.
  const ConnectionPlan guessed = PlanConnection(p.local, p.remote);
  EXPECT_EQ(guessed.qps[0].path_mtu, Mtu::k4096);
  EXPECT_EQ(guessed.qps[0].timeout, 14);
  EXPECT_TRUE(guessed.from_sa.empty());
}

TEST(PlanWithSaPath, AcrossRoutersAddsTheGrhOfThePath) {
  Pair p = IbPair(Transport::kRc);
  PathRecord sa = AgreeingSaPath(p);
  sa.hop_limit = 4;
  sa.flow_label = 0x12345;
  sa.traffic_class = 104;
  PlanOptions options;
  options.sa_path = sa;
  const ConnectionPlan plan = PlanConnection(p.local, p.remote, options);
  EXPECT_TRUE(plan.qps[0].ah.is_global);
  EXPECT_EQ(plan.qps[0].ah.hop_limit, 4);
  EXPECT_EQ(plan.qps[0].ah.flow_label, 0x12345u);
  EXPECT_EQ(plan.qps[0].ah.traffic_class, 104);
  EXPECT_EQ(plan.from_sa.back(), "traffic_class");
  // The plan built from the SA's path passes the SA rules.
  ValidationInput in;
  in.local = &p.local;
  in.remote = &p.remote;
  in.local_plan = plan;
  const auto findings = Validate(in, sa);
  for (const char* id : {"mtu-above-sa-path", "sl-not-sa-path", "grh-missing-across-routers"}) {
    EXPECT_EQ(Find(findings, id), nullptr) << id << "\n" << Dump(findings);
  }
}

TEST(PlanWithSaPath, AForcedMtuWins) {
  Pair p = IbPair(Transport::kUc);
  PathRecord sa = AgreeingSaPath(p);
  sa.mtu = Mtu::k1024;
  PlanOptions options;
  options.sa_path = sa;
  p.local.path.path_mtu = Mtu::k4096;
  p.local.path.path_mtu_forced = true;  // -m 4096
  const ConnectionPlan plan = PlanConnection(p.local, p.remote, options);
  EXPECT_EQ(plan.qps[0].path_mtu, Mtu::k4096);
  EXPECT_EQ(std::count(plan.from_sa.begin(), plan.from_sa.end(), "path_mtu"), 0);
}

// rdma_cm programs the path's rate as the address vector's static rate; so
// does the plan, and only when the SA gave one.
TEST(PlanWithSaPath, TakesTheStaticRateWhenTheSaGivesOne) {
  Pair p = IbPair(Transport::kRc);
  PathRecord sa = AgreeingSaPath(p);
  sa.rate = 3;  // 10 Gb/s
  PlanOptions options;
  options.sa_path = sa;
  ConnectionPlan plan = PlanConnection(p.local, p.remote, options);
  EXPECT_EQ(plan.qps.at(0).ah.static_rate, 3);
  EXPECT_EQ(plan.from_sa,
            (std::vector<std::string>{"dlid", "sl", "path_mtu", "timeout", "static_rate"}));
  sa.rate = 0;
  options.sa_path = sa;
  plan = PlanConnection(p.local, p.remote, options);
  EXPECT_EQ(plan.qps.at(0).ah.static_rate, 0);
  EXPECT_EQ(std::count(plan.from_sa.begin(), plan.from_sa.end(), "static_rate"), 0);
  EXPECT_EQ(PlanConnection(p.local, p.remote).qps.at(0).ah.static_rate, 0);
}

// --path sa on both sides: each plans the SA's MTU (below both ports'), and
// the validator, told by path_from_sa that the peer does too, expects it
// there; a peer that does not ask the SA keeps the negotiated MTU, which is
// then a real mismatch.
TEST(PlanWithSaPath, BothSidesOnTheSaAgreeOnItsMtuAndOneSideAloneDoesNot) {
  Pair p = IbPair(Transport::kRc);
  PathRecord sa = AgreeingSaPath(p);
  sa.mtu = Mtu::k1024;  // the ports are at 4096
  p.local.path.path_from_sa = true;
  PlanOptions options;
  options.sa_path = sa;
  ValidationInput in;
  in.local = &p.local;
  in.remote = &p.remote;
  in.local_plan = PlanConnection(p.local, p.remote, options);
  ASSERT_EQ(in.local_plan->qps.at(0).path_mtu, Mtu::k1024);

  p.remote.path.path_from_sa = true;
  EXPECT_EQ(Problems(Validate(in, sa)).count("mtu-mismatch"), 0u);
  p.remote.path.path_from_sa = false;
  EXPECT_EQ(Problems(Validate(in, sa)).count("mtu-mismatch"), 1u);
}

}  // namespace
}  // namespace qpconnect::test
