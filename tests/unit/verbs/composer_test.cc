// SPDX-License-Identifier: MIT
// The one composer of a connection (qpconnect/composer.h) over fake QPs
// (tests/fakes/fake_env.h): Agree runs the joint GID choice, the path facts,
// the plan and the validator and touches no QP; Gate refuses on an error
// finding and on differing QP counts; Apply reads the chosen GID again
// before RTR and moves the QPs in the one order.
#include "qpconnect/composer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include <memory>
#include <string>
#include <vector>

#include "fakes/fake_env.h"
#include "qpconnect/connector.h"
#include "qpconnect/log.h"
#include "qpconnect/peer_registry.h"

namespace qpconnect {
namespace {

using qpconnect::testing::FakeEnv;

// One side's description of `n` fake RC QPs, as its adopting connector
// makes it (QPs in INIT).
struct Side {
  Side(const char* host, int octet, size_t n, uint32_t first_qpn) : env(host, octet) {
    for (size_t i = 0; i < n; ++i) qps.push_back(env.AddQp(IBV_QPT_RC, first_qpn + uint32_t(i)));
    std::vector<AdoptedQp> adopted;
    for (ibv_qp* qp : qps) adopted.push_back({qp, std::nullopt});
    AdoptOptions o;
    o.psn = 0x100;
    o.qp_env = &env;
    auto adoption = Connector::Adopt(std::move(adopted), o);
    EXPECT_TRUE(adoption) << adoption.error().ToString();
    connector = std::move(*adoption);
    local = connector->Local();
    Composer(env).Prepare(local);
    for (ibv_qp* qp : qps) controls.push_back(env.Control(*qp));
    for (auto& c : controls) control_ptrs.push_back(c.get());
  }
  QpSet Set() {
    QpSet s;
    s.qps = control_ptrs;
    s.context = qps[0]->context;
    s.port = local.port.port_num;
    return s;
  }
  FakeEnv env;
  std::vector<ibv_qp*> qps;
  std::unique_ptr<Connector> connector;
  EndpointInfo local;
  std::vector<std::unique_ptr<verbs::QpControl>> controls;
  std::vector<verbs::QpControl*> control_ptrs;
};

const Finding* FindId(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(Composer, AgreeChoosesPlansAndValidatesWithoutTouchingAQp) {
  Side a("host-a", 1, 2, 0x100), b("host-b", 2, 2, 0x200);
  const size_t modifies = a.env.log().size();  // the adoption's INITs
  auto agreed = Composer(a.env).Agree(a.local, b.local, ComposeOptions{});
  ASSERT_TRUE(agreed) << agreed.error().ToString();
  ASSERT_EQ(agreed->plan.qps.size(), 2u);
  EXPECT_EQ(agreed->plan.qps[1].dest_qp_num, 0x201u);
  EXPECT_EQ(GidToString(agreed->plan.qps[0].ah.dgid), "::ffff:10.99.0.2");
  ASSERT_TRUE(agreed->gid_pair);
  EXPECT_EQ(agreed->gid_pair->outcome, GidPairOutcome::kChosen);
  EXPECT_NE(FindId(agreed->findings, "gid-pair-chosen"), nullptr);
  EXPECT_TRUE(Composer::Gate(*agreed));
  EXPECT_EQ(a.env.log().size(), modifies);      // no modify
  EXPECT_GT(agreed->validate_time.count(), 0);  // timed into what it returns
}

// Issue 39: Prepare publishes each RoCE v2 GID's prefix length on its
// netdev, as the env reads the netdevs' addresses (QpEnv::ReadAddressPrefixes).
TEST(Composer, PreparePublishesThePrefixLengthOfEachGid) {
  class PrefixEnv : public FakeEnv {
   public:
    using FakeEnv::FakeEnv;
    std::vector<AddressPrefix> ReadAddressPrefixes(const std::vector<std::string>& names) override {
      asked = names;
      return {{"veth1", *GidFromString("::ffff:10.99.0.2"), 24},
              {"veth1", *GidFromString("::ffff:10.88.0.2"), 16},
              {"veth9", *GidFromString("fd99::2"), 64}};
    }
    std::vector<std::string> asked;
  } env("host-b", 2);
  EndpointInfo local;
  local.port.link_layer = LinkLayer::kEthernet;
  auto entry = [](uint16_t i, const char* gid, GidType type) {
    Gid g = *GidFromString(gid);
    return GidEntry{i, g, type, FamilyOfGid(g, type), "veth1"};
  };
  local.gid_table = {entry(0, "fe80::aff:fe63:2", GidType::kRoceV2),
                     entry(1, "::ffff:10.99.0.2", GidType::kRoceV2),
                     entry(2, "::ffff:10.88.0.2", GidType::kRoceV2),
                     entry(3, "::ffff:10.99.0.2", GidType::kRoceV1),
                     entry(4, "fd99::2", GidType::kRoceV2)};
  local.path.sgid = local.gid_table[1];
  Composer(env).Prepare(local);
  EXPECT_EQ(env.asked, std::vector<std::string>{"veth1"});
  EXPECT_EQ(local.gid_table[0].prefix_len, 0);  // not listed: unknown
  EXPECT_EQ(local.gid_table[1].prefix_len, 24);
  EXPECT_EQ(local.gid_table[2].prefix_len, 16);
  EXPECT_EQ(local.gid_table[3].prefix_len, 0);  // RoCE v1: no IP header, no subnet
  EXPECT_EQ(local.gid_table[4].prefix_len, 0);  // on another netdev
  EXPECT_EQ(local.path.sgid->prefix_len, 24);
}

TEST(Composer, PathFactsAreJudgedAndAnErrorIsGated) {
  Side a("host-a", 1, 1, 0x100), b("host-b", 2, 1, 0x200);
  RocePathFacts facts;
  facts.netdev_unknown = "not read in this test";
  facts.route_error = "Network is unreachable";
  facts.neighbour_unknown = "no route";
  a.env.SetPath(facts);
  auto agreed = Composer(a.env).Agree(a.local, b.local, ComposeOptions{});
  ASSERT_TRUE(agreed);
  ASSERT_TRUE(agreed->roce_path);
  EXPECT_EQ(GidToString(agreed->roce_path->query.remote), "::ffff:10.99.0.2");
  const Finding* f = FindId(agreed->findings, "route-missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(agreed->findings.front().severity, Severity::kError);  // errors first
  auto gate = Composer::Gate(*agreed);
  ASSERT_FALSE(gate);
  EXPECT_EQ(gate.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(gate.error().operation, "validate");
  EXPECT_NE(gate.error().detail.find("route-missing"), std::string::npos) << gate.error().detail;

  ComposeOptions no_path;
  no_path.read_path = false;
  auto unread = Composer(a.env).Agree(a.local, b.local, no_path);
  ASSERT_TRUE(unread);
  EXPECT_FALSE(unread->roce_path);
  EXPECT_EQ(FindId(unread->findings, "route-missing"), nullptr);
}

TEST(Composer, DifferingQpCountsAreAnErrorForASideThatConnectsEveryQp) {
  Side a("host-a", 1, 2, 0x100), b("host-b", 2, 1, 0x200);
  auto agreed = Composer(a.env).Agree(a.local, b.local, ComposeOptions{});
  ASSERT_TRUE(agreed);
  const Finding* f = FindId(agreed->findings, "qp-count-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(FindId(agreed->findings, "plan-endpoint-mismatch"), nullptr);
  auto gate = Composer::Gate(*agreed, /*refuse_on_findings=*/false);
  ASSERT_FALSE(gate);
  EXPECT_EQ(gate.error().attribute, "qps");

  ComposeOptions some;
  some.connect_every_qp = false;
  auto partial = Composer(a.env).Agree(a.local, b.local, some);
  ASSERT_TRUE(partial);
  const Finding* w = FindId(partial->findings, "qp-count-mismatch");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->severity, Severity::kWarning);
}

TEST(Composer, TheGrhCanBeForcedOffAndTheValidatorSaysWhatThatMeans) {
  Side a("host-a", 1, 1, 0x100), b("host-b", 2, 1, 0x200);
  ComposeOptions o;
  o.grh = false;
  auto agreed = Composer(a.env).Agree(a.local, b.local, o);
  ASSERT_TRUE(agreed);
  EXPECT_FALSE(agreed->plan.qps[0].ah.is_global);
  EXPECT_NE(FindId(agreed->findings, "grh-required"), nullptr);
}

TEST(Composer, ApplyMovesEveryQpToRts) {
  Side a("host-a", 1, 2, 0x100), b("host-b", 2, 2, 0x200);
  const Composer composer(a.env);
  auto agreed = composer.Agree(a.local, b.local, ComposeOptions{});
  ASSERT_TRUE(agreed);
  bool called = false;
  Applied applied;
  Composer::ApplyHooks hooks;
  hooks.before_moves = [&] { called = true; };
  auto done = composer.Apply(*agreed, a.local, a.Set(), applied, hooks);
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_TRUE(called);
  for (ibv_qp* qp : a.qps) EXPECT_EQ(a.env.fake(qp).state(), IBV_QPS_RTS);
  EXPECT_EQ(applied.peer.remote_qpns, (std::vector<uint32_t>{0x200, 0x201}));
  EXPECT_EQ(applied.times.rtr.qps, 2u);
}

// Issue 41: each QP Apply connected is published with its peer (the host,
// the GID and QPN of the plan's entry), so that qp-inspect can pair it.
TEST(Composer, ApplyPublishesEachConnectedQpsPeer) {
  Side a("host-a", 1, 2, 0x100), b("host-b", 2, 2, 0x200);
  const Composer composer(a.env);
  auto agreed = composer.Agree(a.local, b.local, ComposeOptions{});
  ASSERT_TRUE(agreed);
  EXPECT_TRUE(a.env.published().empty());  // nothing before the moves
  Applied applied;
  ASSERT_TRUE(composer.Apply(*agreed, a.local, a.Set(), applied));
  ASSERT_EQ(a.env.published().size(), 2u);
  const PublishedPeer& p = a.env.published()[1];
  EXPECT_EQ(p.device, "rxe0");
  EXPECT_EQ(p.qpn, 0x101u);
  EXPECT_EQ(p.peer_qpn, 0x201u);
  EXPECT_EQ(p.peer_host, "host-b");
  ASSERT_TRUE(p.peer_gid);
  EXPECT_EQ(GidToString(*p.peer_gid), "::ffff:10.99.0.2");
  EXPECT_EQ(p.port, a.local.port.port_num);
}

// A publish that cannot be written (its directory is under a regular file)
// does not fail the connection: the QPs are at RTS, the failure logged once.
TEST(Composer, APublishFailureDoesNotFailTheConnection) {
  char tmpl[] = "/tmp/qpc_publish_XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  PeerRegistry::Options o;
  o.dir = std::string(tmpl) + "/peers";  // ENOTDIR
  o.pid = 4242;
  PeerRegistry registry(o);
  std::vector<std::string> logged;
  auto previous = SetLogHandler([&](LogLevel, std::string_view m) { logged.emplace_back(m); },
                                LogLevel::kWarning);
  for (uint32_t round = 0; round < 2; ++round) {
    Side a("host-a", 1, 1, 0x100 + round), b("host-b", 2, 1, 0x200);
    a.env.SetRegistry(&registry);
    const Composer composer(a.env);
    auto agreed = composer.Agree(a.local, b.local, ComposeOptions{});
    ASSERT_TRUE(agreed);
    Applied applied;
    auto done = composer.Apply(*agreed, a.local, a.Set(), applied);
    EXPECT_TRUE(done) << done.error().ToString();
    EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_RTS);
  }
  SetLogHandler(previous);
  unlink(tmpl);
  EXPECT_TRUE(registry.failed());
  ASSERT_EQ(logged.size(), 1u);  // once, not per connection
  EXPECT_NE(logged[0].find("publishing connected peers for qp-inspect stopped"), std::string::npos)
      << logged[0];
  EXPECT_NE(logged[0].find("QPCONNECT_PUBLISH_PEERS=0"), std::string::npos);
}

TEST(Composer, AGidChangedBeforeRtrIsNamedAndNothingIsModified) {
  Side a("host-a", 1, 1, 0x100), b("host-b", 2, 1, 0x200);
  const Composer composer(a.env);
  auto agreed = composer.Agree(a.local, b.local, ComposeOptions{});
  ASSERT_TRUE(agreed);
  a.env.SetGidsNow({fakes::RoceV2Gid(0, "fe80::1")});  // the IPv4 GID removed
  Applied applied;
  auto done = composer.Apply(*agreed, a.local, a.Set(), applied);
  ASSERT_FALSE(done);
  EXPECT_TRUE(IsGidChanged(done.error()));
  EXPECT_EQ(done.error().attribute, "sgid_index");
  ASSERT_FALSE(agreed->findings.empty());
  EXPECT_EQ(agreed->findings.front().id, "gid-changed-before-rtr");
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_INIT);
}

TEST(Composer, WithoutAContextThereIsNoRecheck) {
  Side a("host-a", 1, 1, 0x100), b("host-b", 2, 1, 0x200);
  const Composer composer(a.env);
  auto agreed = composer.Agree(a.local, b.local, ComposeOptions{});
  ASSERT_TRUE(agreed);
  a.env.SetGidsNow({});
  QpSet set = a.Set();
  set.context = nullptr;
  Applied applied;
  auto done = composer.Apply(*agreed, a.local, set, applied);
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_RTS);
}

}  // namespace
}  // namespace qpconnect
