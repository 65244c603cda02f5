// SPDX-License-Identifier: MIT
// The connector's whole flow over fake QPs (tests/fakes/fake_env.h): describe,
// plan, validate, transition in the one order, abort, and the recycle steps,
// with a failure injected at each transition (INIT, RTR, RTS, RESET): the
// error names the transition and, once the exchange began, the peer is told.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "fakes/fake_env.h"
#include "fakes/scripted_exchanger.h"
#include "qpconnect/connector.h"
#include "qpconnect/verbs/qp_steps.h"

namespace qpconnect {
namespace {

using qpconnect::testing::FakeEnv;
using qpconnect::testing::ScriptedExchanger;

// One side: `n` fake QPs of `type` adopted through `env`.
struct Side {
  Side(const char* host, int octet, ibv_qp_type type, size_t n, uint32_t first_qpn)
      : env(host, octet) {
    for (size_t i = 0; i < n; ++i) qps.push_back(env.AddQp(type, first_qpn + uint32_t(i)));
  }
  Result<std::unique_ptr<Connector>> Adopt() {
    std::vector<AdoptedQp> adopted;
    for (ibv_qp* qp : qps) adopted.push_back({qp, MrDescriptor{0x1000, 0x77, 4096}});
    AdoptOptions o;
    o.psn = 0x100;
    o.qp_env = &env;
    return Connector::Adopt(std::move(adopted), o);
  }
  FakeEnv env;
  std::vector<ibv_qp*> qps;
};

// The peer's published description, as its own adopted connector makes it.
EndpointInfo PeerOf(ibv_qp_type type, size_t n) {
  Side b("host-b", 2, type, n, 0x200);
  auto c = b.Adopt();
  EXPECT_TRUE(c) << c.error().ToString();
  return (*c)->Local();
}

ConnectorOptions Quick() {
  ConnectorOptions o;
  o.timeout = std::chrono::milliseconds(100);
  return o;
}

TEST(ConnectorFlow, AdoptDescribesAndMovesResetQpsToInit) {
  Side a("host-a", 1, IBV_QPT_RC, 2, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  const EndpointInfo& local = (*c)->Local();
  EXPECT_EQ(local.identity.host, "host-a");
  ASSERT_EQ(local.qps.size(), 2u);
  EXPECT_EQ(local.qps[0].qpn, 0x100u);
  EXPECT_EQ(local.qps[1].psn, 0x101u);
  for (ibv_qp* qp : a.qps) EXPECT_EQ(a.env.fake(qp).state(), IBV_QPS_INIT);
  EXPECT_EQ((*c)->report().timings.init.qps, 2u);
}

TEST(ConnectorFlow, AdoptTakesAnInitQpOnlyOnItsPort) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  a.env.fake(a.qps[0]).Force(IBV_QPS_INIT, 2);
  auto c = a.Adopt();
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().attribute, "port_num");
  EXPECT_NE(c.error().detail.find("is on port 2, not port 1"), std::string::npos);

  a.env.fake(a.qps[0]).Force(IBV_QPS_RTS, 1);
  auto past = a.Adopt();
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().detail.find("is in state RTS"), std::string::npos);
}

TEST(ConnectorFlow, ConnectsEveryQpToRtrThenEveryQpToRts) {
  for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
    const size_t n = type == IBV_QPT_UD ? 1 : 3;
    Side a("host-a", 1, type, n, 0x100);
    auto c = a.Adopt();
    ASSERT_TRUE(c) << c.error().ToString();
    ScriptedExchanger x(PeerOf(type, n));
    std::vector<std::string> progress;
    ConnectorOptions o = Quick();
    o.plan.message_size = 1024;  // UD: within the fake port's MTU
    o.on_progress = [&](std::string_view step, size_t done, size_t) {
      progress.push_back(std::string(step) + std::to_string(done));
    };
    auto r = (*c)->Connect(x, o);
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_TRUE(r->connected);
    EXPECT_TRUE(x.aborts().empty());
    EXPECT_EQ(x.barriers(), std::vector<std::string>{"rts"});
    for (ibv_qp* qp : a.qps) EXPECT_EQ(a.env.fake(qp).state(), IBV_QPS_RTS);
    // After the INITs of Adopt(): all RTRs, then all RTSs.
    std::vector<std::string> want;
    for (size_t i = 0; i < n; ++i) want.push_back(std::to_string(100 + i) + " INIT");
    for (size_t i = 0; i < n; ++i) want.push_back(std::to_string(100 + i) + " RTR");
    for (size_t i = 0; i < n; ++i) want.push_back(std::to_string(100 + i) + " RTS");
    EXPECT_EQ(a.env.log(), want);
    EXPECT_EQ(progress.front(), "rtr1");
    EXPECT_EQ(progress.back(), "rts" + std::to_string(n));
    EXPECT_EQ(r->timings.rtr.qps, n);
    EXPECT_EQ(r->timings.rts.qps, n);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ((*c)->remote_qpn(i), 0x200u + i);
    if (type == IBV_QPT_UD) {
      EXPECT_EQ(a.env.ah_attrs().size(), n);  // one address handle per peer QP
      EXPECT_NE((*c)->remote_qkey(), 0u);
    } else {
      EXPECT_TRUE(a.env.ah_attrs().empty());
    }
  }
}

TEST(ConnectorFlow, AFailureAtInitNamesTheTransition) {
  Side a("host-a", 1, IBV_QPT_RC, 2, 0x100);
  a.env.fake(a.qps[1]).FailInto(IBV_QPS_INIT, ENOMEM);
  auto c = a.Adopt();
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::kVerbs);
  EXPECT_EQ(c.error().sys_errno, ENOMEM);
  EXPECT_EQ(c.error().operation, "ibv_modify_qp RESET->INIT (rc qp 0x000101)");
  EXPECT_NE(c.error().detail.find("out of resources"), std::string::npos) << c.error().detail;
}

struct ConnectFailure {
  ibv_qp_state into;
  const char* operation;
};

TEST(ConnectorFlow, AFailureAtRtrOrRtsNamesTheTransitionAndTellsThePeer) {
  for (ConnectFailure f :
       {ConnectFailure{IBV_QPS_RTR, "ibv_modify_qp INIT->RTR (rc qp 0x000101)"},
        ConnectFailure{IBV_QPS_RTS, "ibv_modify_qp RTR->RTS (rc qp 0x000101)"}}) {
    Side a("host-a", 1, IBV_QPT_RC, 2, 0x100);
    auto c = a.Adopt();
    ASSERT_TRUE(c) << c.error().ToString();
    a.env.fake(a.qps[1]).FailInto(f.into, EINVAL);
    ScriptedExchanger x(PeerOf(IBV_QPT_RC, 2));
    auto r = (*c)->Connect(x, Quick());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kVerbs);
    EXPECT_EQ(r.error().sys_errno, EINVAL);
    EXPECT_EQ(r.error().operation, f.operation);
    EXPECT_NE(r.error().detail.find("refused; sent"), std::string::npos) << r.error().detail;
    EXPECT_EQ(x.aborts(), std::vector<std::string>{"modify failed"});
    EXPECT_TRUE(x.barriers().empty());
    EXPECT_FALSE((*c)->report().connected);
    EXPECT_EQ((*c)->report().reached, ConnectPhase::kConnect);
    if (f.into == IBV_QPS_RTR) {
      // The one order: no QP of this side was at RTS when QP 1's RTR failed.
      EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_RTR);
      EXPECT_EQ(a.env.fake(a.qps[1]).state(), IBV_QPS_INIT);
      EXPECT_EQ((*c)->report().timings.rtr.qps, 1u);
    } else {
      EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_RTS);
      EXPECT_EQ(a.env.fake(a.qps[1]).state(), IBV_QPS_RTR);
      EXPECT_EQ((*c)->report().timings.rtr.qps, 2u);
      EXPECT_EQ((*c)->report().timings.rts.qps, 1u);
    }
  }
}

TEST(ConnectorFlow, AValidationRefusalModifiesNothingAndTellsThePeer) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  EndpointInfo peer = PeerOf(IBV_QPT_RC, 1);
  peer.transport = Transport::kUc;
  ScriptedExchanger x(peer);
  const size_t modifies = a.env.log().size();
  auto r = (*c)->Connect(x, Quick());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(r.error().operation, "validate");
  EXPECT_EQ(x.aborts(), std::vector<std::string>{"validation failed"});
  EXPECT_EQ(a.env.log().size(), modifies);
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_INIT);
  EXPECT_FALSE((*c)->report().findings.empty());
}

// The gate promotes qp-count-mismatch to an error (HoldQpCountsEqual).
TEST(ConnectorFlow, DifferingQpCountsAreRefusedBeforeAnyModify) {
  Side a("host-a", 1, IBV_QPT_RC, 2, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  ScriptedExchanger x(PeerOf(IBV_QPT_RC, 3));
  const size_t modifies = a.env.log().size();
  auto r = (*c)->Connect(x, Quick());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible);
  EXPECT_NE(r.error().detail.find("qp-count-mismatch"), std::string::npos) << r.error().detail;
  EXPECT_EQ(x.aborts(), std::vector<std::string>{"validation failed"});
  EXPECT_EQ(a.env.log().size(), modifies);
}

TEST(ConnectorFlow, AnAdoptedConnectorDoesNotRecycleTheCallersQps) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  auto r = (*c)->Recycle();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_INIT);
}

// The recycle steps the owning session runs (Session::Recycle): every QP to
// RESET, then every QP RESET->INIT with its receives posted again.
TEST(RecycleSteps, ResetThenInitTakesConnectedQpsBackToInit) {
  Side a("host-a", 1, IBV_QPT_RC, 2, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  ScriptedExchanger x(PeerOf(IBV_QPT_RC, 2));
  ASSERT_TRUE((*c)->Connect(x, Quick()));
  std::vector<std::unique_ptr<verbs::QpControl>> owned;
  std::vector<verbs::QpControl*> controls;
  for (ibv_qp* qp : a.qps) {
    owned.push_back(a.env.Control(*qp));
    controls.push_back(owned.back().get());
  }
  ASSERT_TRUE(verbs::ResetQps(controls, Transport::kRc));
  for (ibv_qp* qp : a.qps) EXPECT_EQ(a.env.fake(qp).state(), IBV_QPS_RESET);
  QpAttrs init;
  init.port_num = 1;
  std::vector<size_t> posted;
  verbs::QpStepTimes times;
  auto done = verbs::InitQps(
      controls, Transport::kRc, init, verbs::DefaultAccessFlags(Transport::kRc),
      [&](size_t i) -> Result<void> {
        posted.push_back(i);
        return Ok();
      },
      {}, times);
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_EQ(posted, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(times.qps, 2u);
  for (ibv_qp* qp : a.qps) EXPECT_EQ(a.env.fake(qp).state(), IBV_QPS_INIT);
}

TEST(RecycleSteps, AFailureAtResetNamesTheTransitionAndTheQp) {
  Side a("host-a", 1, IBV_QPT_UD, 2, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  a.env.fake(a.qps[1]).FailInto(IBV_QPS_RESET, EINVAL);
  std::vector<std::unique_ptr<verbs::QpControl>> owned;
  std::vector<verbs::QpControl*> controls;
  for (ibv_qp* qp : a.qps) {
    owned.push_back(a.env.Control(*qp));
    controls.push_back(owned.back().get());
  }
  auto r = verbs::ResetQps(controls, Transport::kUd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kVerbs);
  EXPECT_EQ(r.error().operation, "ibv_modify_qp ->RESET (ud qp 0x000101)");
  EXPECT_EQ(r.error().attribute, "mask STATE");
  EXPECT_NE(r.error().detail.find("QP 1 (recycle)"), std::string::npos) << r.error().detail;
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_RESET);
  EXPECT_EQ(a.env.fake(a.qps[1]).state(), IBV_QPS_INIT);
}

TEST(RecycleSteps, AFailureAtTheRecycledInitNamesTheTransition) {
  Side a("host-a", 1, IBV_QPT_UC, 1, 0x100);
  auto qp = a.env.Control(*a.qps[0]);
  a.env.fake(a.qps[0]).FailInto(IBV_QPS_INIT, EPERM);
  verbs::QpControl* controls[] = {qp.get()};
  QpAttrs init;
  init.port_num = 1;
  verbs::QpStepTimes times;
  auto r = verbs::InitQps(controls, Transport::kUc, init, 0, {}, {}, times);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().operation, "ibv_modify_qp RESET->INIT (uc qp 0x000100)");
  EXPECT_EQ(times.qps, 0u);
}

// Issue 31: the joint GID choice moves a peer that picked its link-local GID
// alone to the routable pair both tables hold; the plan addresses it.
TEST(ConnectorFlow, JointGidChoiceAddressesTheChosenPair) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  EndpointInfo peer = PeerOf(IBV_QPT_RC, 1);
  peer.gid_table.insert(peer.gid_table.begin(), fakes::RoceV2Gid(0, "fe80::2"));
  peer.path.sgid = peer.gid_table.front();  // picked link-local alone
  peer.path.gid_choice = GidChoice::kJoint;
  ScriptedExchanger x(peer);
  auto r = (*c)->Connect(x, Quick());
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_TRUE(r->gid_pair);
  EXPECT_EQ(r->gid_pair->outcome, GidPairOutcome::kChosen);
  EXPECT_EQ(GidToString(r->plan->qps[0].ah.dgid), "::ffff:10.99.0.2");
  EXPECT_EQ(r->local.path.gid_choice, GidChoice::kJoint);
  bool named = false;
  for (const auto& f : r->findings) named |= f.id == "gid-pair-chosen";
  EXPECT_TRUE(named);
}

// Issue 31, the mesh's way (no Exchanger): the composer's steps one by one,
// Prepare before publishing, Agree once the peer's description arrived,
// then ConnectAgreed; the peer (which picked its link-local GID alone) is
// addressed at the routable pair, and the choice is reported.
TEST(ConnectorFlow, JointGidChoiceWithoutAnExchanger) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  (*c)->Prepare();
  EXPECT_EQ((*c)->Local().path.gid_choice, GidChoice::kJoint);
  EndpointInfo peer = PeerOf(IBV_QPT_RC, 1);
  peer.gid_table.insert(peer.gid_table.begin(), fakes::RoceV2Gid(0, "fe80::2"));
  peer.path.sgid = peer.gid_table.front();
  peer.path.gid_choice = GidChoice::kJoint;
  auto agreed = (*c)->Agree(peer, Quick());
  ASSERT_TRUE(agreed) << agreed.error().ToString();
  const ConnectReport& r = (*c)->report();
  ASSERT_TRUE(r.gid_pair);
  ASSERT_EQ(r.gid_pair->outcome, GidPairOutcome::kChosen) << r.gid_pair->why;
  EXPECT_EQ(GidToString(r.remote->path.sgid->gid), "::ffff:10.99.0.2");
  EXPECT_EQ(GidToString(r.plan->qps[0].ah.dgid), "::ffff:10.99.0.2");
  auto done = (*c)->ConnectAgreed(Quick());
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_RTS);
  bool named = false;
  for (const auto& f : (*c)->report().findings) named |= f.id == "gid-pair-chosen";
  EXPECT_TRUE(named);
}

// The composer's steps in order: ConnectAgreed before Agree is refused,
// nothing modified.
TEST(ConnectorFlow, ConnectAgreedBeforeAgreeIsRefused) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  auto done = (*c)->ConnectAgreed(Quick());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_INIT);
}

// Issue 31: the chosen GID gone from the table before RTR is named, nothing
// is modified and the peer is told.
TEST(ConnectorFlow, GidChangedBeforeRtrRefusesAndTellsThePeer) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  ScriptedExchanger x(PeerOf(IBV_QPT_RC, 1));
  ConnectorOptions o = Quick();
  o.before_rtr = [&a] { a.env.SetGidsNow({fakes::RoceV2Gid(0, "fe80::1")}); };
  auto r = (*c)->Connect(x, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(r.error().attribute, "sgid_index");
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_INIT);
  ASSERT_EQ(x.aborts().size(), 1u);
  EXPECT_EQ(x.aborts()[0], "its GID changed before RTR");
  const auto& f = (*c)->report().findings;
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "gid-changed-before-rtr");
}

// Issue 31 item 2: the kernel's path facts, read through the env for the
// GID pair in use, are judged before RTR: a bad one refuses, nothing is
// modified, the peer is told, and the facts are in the report.
TEST(ConnectorFlow, ABadPathFactRefusesBeforeRtrAndTellsThePeer) {
  Side a("host-a", 1, IBV_QPT_RC, 1, 0x100);
  auto c = a.Adopt();
  ASSERT_TRUE(c) << c.error().ToString();
  RocePathFacts facts;
  facts.netdev = NetdevInfo{"veth1", {0x02, 0, 0x0a, 0x63, 0, 0x01}, 0, 1500};
  facts.route_error = "Network is unreachable";
  facts.neighbour_unknown = "no neighbour entry yet";
  a.env.SetPath(facts);
  const EndpointInfo peer = PeerOf(IBV_QPT_RC, 1);
  ScriptedExchanger x(peer);
  auto r = (*c)->Connect(x, Quick());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(a.env.fake(a.qps[0]).state(), IBV_QPS_INIT);
  EXPECT_EQ(x.aborts(), std::vector<std::string>{"validation failed"});
  const ConnectReport& rep = (*c)->report();
  ASSERT_TRUE(rep.roce_path);
  EXPECT_EQ(rep.roce_path->query.remote, peer.path.sgid->gid);
  EXPECT_EQ(rep.roce_path->query.local, *rep.local.path.sgid);
  bool missing = false, facts_line = false;
  for (const auto& f : rep.findings) {
    missing |= f.id == "route-missing" && f.severity == Severity::kError;
    facts_line |= f.id == "path-facts" && f.severity == Severity::kInfo;
  }
  EXPECT_TRUE(missing);
  EXPECT_TRUE(facts_line);
}

}  // namespace
}  // namespace qpconnect
