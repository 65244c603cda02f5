// rules_sa.cc: the local plan against the SA's PathRecord (issue 19). The
// catalogue tests give each rule its violating fixture (violations.h); these
// check the silence around them and the values reported.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace qpconnect::test
