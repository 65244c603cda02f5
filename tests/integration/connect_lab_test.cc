// SPDX-License-Identifier: MIT
// The connector against the real kernel verbs stack: two sessions in one
// process, one on each lab device (rxe0, rxe1), connected by hand and proven
// with traffic; and the misconfiguration witnesses: each violation pushed to
// the real stack shows its real symptom, and the validator names it first.
// Runs inside the Soft-RoCE lab (label `lab`); skipped elsewhere.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "lab_env.h"
#include "qpconnect/plan.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/session.h"
#include "qpconnect/verbs/traffic.h"
#include "rdma_resources.h"

namespace qpconnect {
namespace {

using verbs::Role;
using verbs::Session;
using verbs::SessionOptions;
using verbs::TrafficOptions;
using verbs::TrafficReport;

class LabTest : public testing::LabFixture {
 protected:
  SessionOptions Options(int side, Transport t) const {
    SessionOptions o;
    o.device = side == 0 ? env_.dev0 : env_.dev1;
    o.gid.index = side == 0 ? env_.gid0 : env_.gid1;
    o.transport = t;
    o.message_size = t == Transport::kUd ? 1024 : 4096;
    return o;
  }

  std::unique_ptr<Session> Open(const SessionOptions& o) {
    auto s = Session::Open(o);
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? std::move(*s) : nullptr;
  }

  struct Outcome {
    Result<TrafficReport> client = Error{};
    Result<TrafficReport> server = Error{};
  };

  // a is the client, b the server; both already connected.
  static Outcome Traffic(Session& a, Session& b, const TrafficOptions& o) {
    Outcome out;
    std::thread server([&] { out.server = RunTraffic(b, a.Local(), Role::kServer, o); });
    out.client = RunTraffic(a, b.Local(), Role::kClient, o);
    server.join();
    return out;
  }

  static bool HasFinding(const std::vector<Finding>& f, const std::string& id) {
    for (const auto& x : f) {
      if (x.id == id && x.severity == Severity::kError) return true;
    }
    return false;
  }

  static std::string Dump(const std::vector<Finding>& f) {
    std::string s;
    for (const auto& x : f) s += FindingToString(x) + "\n";
    return s;
  }

  // Opens both sides, plans, optionally tweaks the plans, validates and connects.
  struct Pair {
    std::unique_ptr<Session> a, b;
    ConnectionPlan plan_a, plan_b;
    std::vector<Finding> findings;
    Result<void> connect_a = Ok();
    Result<void> connect_b = Ok();
  };
  Pair Connect(const SessionOptions& oa, const SessionOptions& ob,
               const std::function<void(Pair&)>& tweak = {}, PlanOptions popts_a = {},
               PlanOptions popts_b = {}) {
    Pair p;
    p.a = Open(oa);
    p.b = Open(ob);
    if (!p.a || !p.b) return p;
    popts_a.message_size = oa.message_size;
    popts_b.message_size = ob.message_size;
    p.plan_a = PlanConnection(p.a->Local(), p.b->Local(), popts_a);
    p.plan_b = PlanConnection(p.b->Local(), p.a->Local(), popts_b);
    if (tweak) tweak(p);
    p.findings = Validate({&p.a->Local(), &p.b->Local(), p.plan_a, p.plan_b});
    p.connect_a = p.a->Connect(p.plan_a, p.b->Local());
    p.connect_b = p.b->Connect(p.plan_b, p.a->Local());
    return p;
  }

  // Both sessions opened, the validator found no error, both reached RTS.
  static void ExpectCleanConnection(const Pair& p) {
    ASSERT_TRUE(p.a && p.b);
    EXPECT_FALSE(HasErrors(p.findings)) << Dump(p.findings);
    ASSERT_TRUE(p.connect_a) << p.connect_a.error().ToString();
    ASSERT_TRUE(p.connect_b) << p.connect_b.error().ToString();
  }

  static void ExpectTrafficOk(const Outcome& out) {
    ASSERT_TRUE(out.client) << out.client.error().ToString();
    ASSERT_TRUE(out.server) << out.server.error().ToString();
  }
};

// The traffic's deadline is for a proof that never completes (Doomed: one
// that must time out), not a speed claim: 100 iterations take well under a
// second even on a loaded emulated guest.
TrafficOptions Quick(uint32_t size, uint32_t iters = 100) {
  TrafficOptions o;
  o.size = size;
  o.iters = iters;
  o.timeout = std::chrono::milliseconds(5000);
  return o;
}

TrafficOptions Doomed(uint32_t size) {
  TrafficOptions o = Quick(size, 5);
  o.timeout = std::chrono::milliseconds(3000);
  return o;
}

// ---- connections that must work ----

TEST_F(LabTest, RcConnectsAndPassesSendRecvWriteAndRead) {
  auto p = Connect(Options(0, Transport::kRc), Options(1, Transport::kRc));
  ExpectCleanConnection(p);
  if (HasFatalFailure()) return;
  auto out = Traffic(*p.a, *p.b, Quick(4096));
  ExpectTrafficOk(out);
  if (HasFatalFailure()) return;
  EXPECT_EQ(out.client->messages, 101u);  // 100 ping-pongs + the RDMA "done"
  EXPECT_TRUE(out.client->rdma_write_checked);
  EXPECT_TRUE(out.client->rdma_read_checked);
  EXPECT_TRUE(out.server->rdma_read_checked);
  std::printf("rc: %.1f us/round trip, %.1f Mbit/s\n", out.client->avg_rtt_us,
              out.client->mbit_per_s);
}

TEST_F(LabTest, UcConnectsAndPassesSendRecvAndWrite) {
  auto p = Connect(Options(0, Transport::kUc), Options(1, Transport::kUc));
  ExpectCleanConnection(p);
  if (HasFatalFailure()) return;
  auto out = Traffic(*p.a, *p.b, Quick(4096));
  ExpectTrafficOk(out);
  if (HasFatalFailure()) return;
  EXPECT_TRUE(out.client->rdma_write_checked);
  EXPECT_FALSE(out.client->rdma_read_checked);  // UC has no RDMA READ
}

TEST_F(LabTest, UdConnectsAndPassesSendRecv) {
  auto p = Connect(Options(0, Transport::kUd), Options(1, Transport::kUd));
  ExpectCleanConnection(p);
  if (HasFatalFailure()) return;
  auto out = Traffic(*p.a, *p.b, Quick(1024));
  ExpectTrafficOk(out);
  if (HasFatalFailure()) return;
  EXPECT_EQ(out.server->messages, 100u);
}

TEST_F(LabTest, RcConnectsEightQpsInOneExchange) {
  SessionOptions oa = Options(0, Transport::kRc), ob = Options(1, Transport::kRc);
  oa.num_qps = ob.num_qps = 8;
  auto p = Connect(oa, ob);
  ExpectCleanConnection(p);
  if (HasFatalFailure()) return;
  auto out = Traffic(*p.a, *p.b, Quick(1024, 20));
  ExpectTrafficOk(out);
  if (HasFatalFailure()) return;
  EXPECT_EQ(out.client->messages, 8u * 21u);
}

// ---- witnesses: the violation, its real symptom, and the validator ----

TEST_F(LabTest, WitnessPsnMismatchIsCaughtAndBreaksRc) {
  auto p = Connect(Options(0, Transport::kRc), Options(1, Transport::kRc), [](Pair& x) {
    x.plan_a.qps[0].rq_psn = (x.plan_a.qps[0].rq_psn + 1000) & kPsnMask;
  });
  ASSERT_TRUE(p.a && p.b);
  EXPECT_TRUE(HasFinding(p.findings, "psn-mismatch")) << Dump(p.findings);
  ASSERT_TRUE(p.connect_a && p.connect_b);  // the hardware accepts it silently...
  auto out = Traffic(*p.a, *p.b, Doomed(64));
  EXPECT_FALSE(out.client && out.server);  // ...and traffic breaks
  if (!out.server) std::printf("psn witness, server: %s\n", out.server.error().ToString().c_str());
  if (!out.client) std::printf("psn witness, client: %s\n", out.client.error().ToString().c_str());
}

TEST_F(LabTest, WitnessQpnMismatchIsCaughtAndSendNeverCompletes) {
  // On hardware this ends in IBV_WC_RETRY_EXC_ERR; rxe (Linux 6.1) drops the
  // packets for the unknown QPN and the SEND never completes: the real
  // symptom here is a hang, which our deadline turns into kTimeout.
  auto p = Connect(Options(0, Transport::kRc), Options(1, Transport::kRc), [](Pair& x) {
    x.plan_a.qps[0].dest_qp_num = (x.plan_a.qps[0].dest_qp_num + 7) & kQpnMask;
  });
  ASSERT_TRUE(p.a && p.b);
  EXPECT_TRUE(HasFinding(p.findings, "qpn-mismatch")) << Dump(p.findings);
  ASSERT_TRUE(p.connect_a && p.connect_b);
  auto out = Traffic(*p.a, *p.b, Doomed(64));
  ASSERT_FALSE(out.client);
  std::printf("qpn witness, client: %s\n", out.client.error().ToString().c_str());
  EXPECT_TRUE(out.client.error().code == ErrorCode::kTimeout ||
              out.client.error().code == ErrorCode::kTraffic);
  EXPECT_NE(out.client.error().operation.find("SEND"), std::string::npos);
}

TEST_F(LabTest, WitnessMtuMismatchIsCaughtAndBreaksRc) {
  // Each side forces its own MTU (described as forced): each plan keeps its own.
  SessionOptions oa = Options(0, Transport::kRc);
  SessionOptions ob = Options(1, Transport::kRc);
  oa.mtu = Mtu::k1024;
  ob.mtu = Mtu::k256;
  auto p = Connect(oa, ob);
  ASSERT_TRUE(p.a && p.b);
  EXPECT_TRUE(HasFinding(p.findings, "mtu-mismatch")) << Dump(p.findings);
  ASSERT_TRUE(p.connect_a && p.connect_b);
  auto out = Traffic(*p.a, *p.b, Doomed(4096));
  EXPECT_FALSE(out.client && out.server);
  if (!out.client) std::printf("mtu witness, client: %s\n", out.client.error().ToString().c_str());
  if (!out.server) std::printf("mtu witness, server: %s\n", out.server.error().ToString().c_str());
}

TEST_F(LabTest, WitnessGidFamilyMixIsCaughtAndBreaksRc) {
  // Side A sends from its link-local IPv6 GID (index 0 on rxe) to B's
  // IPv4-mapped GID: the families differ.
  SessionOptions oa = Options(0, Transport::kRc);
  oa.gid.index = 0;
  auto p = Connect(oa, Options(1, Transport::kRc));
  ASSERT_TRUE(p.a && p.b);
  ASSERT_TRUE(p.a->Local().path.sgid);
  ASSERT_EQ(p.a->Local().path.sgid->family, GidFamily::kIpv6);
  bool flagged = false;
  for (const auto& f : p.findings) {
    if (f.severity == Severity::kError && (f.attribute == "sgid_index" || f.attribute == "dgid"))
      flagged = true;
  }
  EXPECT_TRUE(flagged) << Dump(p.findings);
  bool failed = !p.connect_a || !p.connect_b;
  if (!failed) {
    auto out = Traffic(*p.a, *p.b, Doomed(64));
    failed = !out.client || !out.server;
    if (!out.client)
      std::printf("gid witness, client: %s\n", out.client.error().ToString().c_str());
  } else {
    std::printf("gid witness, connect: %s\n",
                (!p.connect_a ? p.connect_a.error() : p.connect_b.error()).ToString().c_str());
  }
  EXPECT_TRUE(failed);
}

TEST_F(LabTest, WitnessQkeyMismatchIsCaughtAndDropsUdDatagrams) {
  SessionOptions ob = Options(1, Transport::kUd);
  ob.qkey = 0x22222222;
  auto p = Connect(Options(0, Transport::kUd), ob);
  ASSERT_TRUE(p.a && p.b);
  EXPECT_TRUE(HasFinding(p.findings, "qkey-mismatch")) << Dump(p.findings);
  ASSERT_TRUE(p.connect_a && p.connect_b);
  auto out = Traffic(*p.a, *p.b, Doomed(256));
  ASSERT_FALSE(out.server);  // B never receives A's datagrams: silently dropped
  EXPECT_EQ(out.server.error().code, ErrorCode::kTimeout) << out.server.error().ToString();
}

// ---- refusals are explained ----

TEST_F(LabTest, RefusedRtrNamesTransitionMaskAndValues) {
  auto p = Connect(Options(0, Transport::kRc), Options(1, Transport::kRc), [](Pair& x) {
    x.plan_a.qps[0].ah.is_global = false;  // RoCE needs a GRH
  });
  ASSERT_TRUE(p.a && p.b);
  ASSERT_FALSE(p.connect_a);
  const Error& e = p.connect_a.error();
  std::printf("refusal: %s\n", e.ToString().c_str());
  EXPECT_EQ(e.code, ErrorCode::kVerbs);
  EXPECT_NE(e.sys_errno, 0);
  EXPECT_NE(e.operation.find("INIT->RTR"), std::string::npos);
  EXPECT_NE(e.attribute.find("AV"), std::string::npos);
  EXPECT_NE(e.detail.find("is_global=0"), std::string::npos);
  EXPECT_NE(e.detail.find("dest_qp_num="), std::string::npos);
}

// ---- nothing is left behind ----

using testing::CountAll;
using testing::CountResources;
using testing::Counts;

TEST_F(LabTest, SessionsReleaseEveryQpCqMrAndPdOnSuccessAndFailure) {
  const Counts before = CountAll(env_.dev0);
  ASSERT_GE(before.qp, 0);
  {
    SessionOptions oa = Options(0, Transport::kRc);
    oa.num_qps = 4;
    auto a = Open(oa);
    ASSERT_TRUE(a);
    EXPECT_EQ(CountResources("qp", env_.dev0), before.qp + 4);
    EXPECT_GT(CountResources("mr", env_.dev0), before.mr);
  }
  EXPECT_EQ(CountAll(env_.dev0), before);
  {
    // A failure path: a session whose RTR is refused.
    auto p = Connect(Options(0, Transport::kRc), Options(1, Transport::kRc),
                     [](Pair& x) { x.plan_a.qps[0].path_mtu = static_cast<Mtu>(7); });
    EXPECT_FALSE(p.connect_a);
  }
  EXPECT_EQ(CountAll(env_.dev0), before);
  // Options the device cannot meet fail cleanly too, before anything is
  // created: a GID index that is not there, one that an address vector cannot
  // carry, and a receive depth beyond the device's max_qp_wr (refused with the
  // limit named instead of failing inside ibv_create_qp).
  SessionOptions bad = Options(0, Transport::kRc);
  bad.gid.index = 999;
  EXPECT_FALSE(Session::Open(bad));
  bad.gid.index = 300;
  auto wide = Session::Open(bad);
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().code, ErrorCode::kInvalidArgument) << wide.error().ToString();
  SessionOptions huge = Options(0, Transport::kRc);
  huge.message_size = 1;
  huge.rx_depth = 1u << 22;
  auto h = Session::Open(huge);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().code, ErrorCode::kInvalidArgument) << h.error().ToString();
  EXPECT_EQ(h.error().attribute, "rx-depth");
  EXPECT_NE(h.error().detail.find("max_qp_wr"), std::string::npos) << h.error().detail;
  EXPECT_EQ(CountAll(env_.dev0), before);
}

}  // namespace
}  // namespace qpconnect
