// SPDX-License-Identifier: MIT
// The public Connector (qpconnect/connector.h) against the real kernel verbs
// stack: two connectors in one process, one per lab device (rxe0, rxe1), each
// with its own exchanger over one socketpair, in both modes:
//   owning   the connector creates everything; the library's traffic proof runs;
//   adopted  the test creates its own PD, CQ, QPs and MR with plain libibverbs,
//            hands them in, and passes and checks its own SENDs and RDMA WRITEs.
// Also: the validation gate refuses on both sides before anything leaves INIT,
// Adopt() refuses what it cannot take, and nothing is leaked.
// Runs inside the Soft-RoCE lab (label `lab`); skipped elsewhere.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "lab_env.h"
#include "qpconnect/connector.h"
#include "qpconnect/oob/stdio.h"
#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/resources.h"
#include "qpconnect/verbs/traffic.h"
#include "rdma_resources.h"

namespace qpconnect {
namespace {

using namespace std::chrono_literals;

// One socketpair, an exchanger on each end.
struct ChannelPair {
  int fds[2] = {-1, -1};
  std::unique_ptr<oob::StdioExchanger> a, b;

  ChannelPair() {
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return;
    auto xa = oob::StdioExchanger::Create(fds[0], fds[0]);
    auto xb = oob::StdioExchanger::Create(fds[1], fds[1]);
    if (xa) a = std::move(*xa);
    if (xb) b = std::move(*xb);
  }
  ~ChannelPair() {
    a.reset();
    b.reset();
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
};

// The caller's own resources for adopted mode, made with plain libibverbs
// through the RAII owners (members in creation order).
struct OwnQps {
  verbs::UniqueContext ctx;
  verbs::UniquePd pd;
  verbs::UniqueCq cq;
  std::vector<verbs::UniqueQp> qps;
  std::vector<uint8_t> buffer;
  verbs::UniqueMr mr;
  static constexpr uint32_t kSlot = 1024;  // per QP: [send][recv (+40 GRH)][rdma target]

  uint8_t* Send(size_t i) { return buffer.data() + i * 3 * kSlot; }
  uint8_t* Recv(size_t i) { return Send(i) + kSlot; }
  uint8_t* Target(size_t i) { return Send(i) + 2 * kSlot; }
};

std::unique_ptr<OwnQps> MakeOwnQps(const std::string& dev, ibv_qp_type type, size_t n) {
  auto o = std::make_unique<OwnQps>();
  auto ctx = verbs::OpenDevice(dev);
  EXPECT_TRUE(ctx) << ctx.error().ToString();
  if (!ctx) return nullptr;
  o->ctx = std::move(*ctx);
  auto pd = verbs::AllocPd(*o->ctx);
  EXPECT_TRUE(pd);
  if (!pd) return nullptr;
  o->pd = std::move(*pd);
  auto cq = verbs::CreateCq(*o->ctx, 64, nullptr);
  EXPECT_TRUE(cq);
  if (!cq) return nullptr;
  o->cq = std::move(*cq);
  for (size_t i = 0; i < n; ++i) {
    ibv_qp_init_attr init{};
    init.send_cq = o->cq.get();
    init.recv_cq = o->cq.get();
    init.qp_type = type;
    init.cap.max_send_wr = 4;
    init.cap.max_recv_wr = 4;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    auto qp = verbs::CreateQp(*o->pd, init);
    EXPECT_TRUE(qp) << qp.error().ToString();
    if (!qp) return nullptr;
    o->qps.push_back(std::move(*qp));
  }
  o->buffer.assign(n * 3 * OwnQps::kSlot, 0);
  auto mr = verbs::RegMr(*o->pd, o->buffer.data(), o->buffer.size(),
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  EXPECT_TRUE(mr);
  if (!mr) return nullptr;
  o->mr = std::move(*mr);
  return o;
}

std::vector<AdoptedQp> Adoptable(OwnQps& own) {
  std::vector<AdoptedQp> v;
  for (size_t i = 0; i < own.qps.size(); ++i) {
    AdoptedQp a;
    a.qp = own.qps[i].get();
    if (own.qps[i]->qp_type != IBV_QPT_UD) {
      a.mr = MrDescriptor{reinterpret_cast<uint64_t>(own.Target(i)), own.mr->rkey, OwnQps::kSlot};
    }
    v.push_back(a);
  }
  return v;
}

// Polls `cq` for one completion within 5 s; its status, or -1 on timeout (a
// deadline for a completion that never comes, not a speed claim: one takes
// milliseconds even on a loaded emulated guest).
int PollOne(ibv_cq& cq, ibv_wc& wc) {
  auto until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until) {
    int n = ibv_poll_cq(&cq, 1, &wc);
    if (n < 0) return -2;
    if (n == 1) return wc.status;
  }
  return -1;
}

class ConnectorLabTest : public testing::LabFixture {
 protected:
  verbs::SessionOptions Owning(int side, Transport t) const {
    verbs::SessionOptions o;
    o.device = side == 0 ? env_.dev0 : env_.dev1;
    o.gid.index = side == 0 ? env_.gid0 : env_.gid1;
    o.transport = t;
    o.message_size = t == Transport::kUd ? 1024 : 4096;
    return o;
  }

  static verbs::SessionOptions Forced(verbs::SessionOptions o, Mtu mtu) {
    o.mtu = mtu;
    return o;
  }

  AdoptOptions Adopting(int side) const {
    AdoptOptions o;
    o.gid.index = side == 0 ? env_.gid0 : env_.gid1;
    return o;
  }

  // Connects a and b concurrently (b in a second thread).
  struct Both {
    Result<ConnectReport> a = Error{};
    Result<ConnectReport> b = Error{};
  };
  static Both ConnectBoth(Connector& a, Connector& b, const ConnectorOptions& oa,
                          const ConnectorOptions& ob) {
    ChannelPair ch;
    EXPECT_TRUE(ch.a && ch.b);
    Both r;
    auto fb = std::async(std::launch::async, [&] { return b.Connect(*ch.b, ob); });
    r.a = a.Connect(*ch.a, oa);
    r.b = fb.get();
    return r;
  }

  static ConnectorOptions Quick() {
    ConnectorOptions o;
    o.timeout = 10s;
    return o;
  }

  // The traffic proof between two connected owning connectors (`x` the
  // client): true when both sides passed and RDMA WRITE and READ were checked.
  static bool ProveTraffic(Connector& x, Connector& y, uint32_t iters) {
    verbs::TrafficOptions t;
    t.iters = iters;
    t.timeout = 5000ms;
    auto server = std::async(std::launch::async, [&] {
      return verbs::RunTraffic(*y.session(), x.Local(), verbs::Role::kServer, t);
    });
    auto client = verbs::RunTraffic(*x.session(), y.Local(), verbs::Role::kClient, t);
    auto s = server.get();
    EXPECT_TRUE(client) << client.error().ToString();
    EXPECT_TRUE(s) << s.error().ToString();
    return client && s && client->rdma_write_checked && client->rdma_read_checked;
  }
};

TEST_F(ConnectorLabTest, OwningModeConnectsAndPassesTheTrafficProof) {
  auto a = Connector::Open(Owning(0, Transport::kRc));
  auto b = Connector::Open(Owning(1, Transport::kRc));
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  Both r = ConnectBoth(**a, **b, Quick(), Quick());
  ASSERT_TRUE(r.a) << r.a.error().ToString();
  ASSERT_TRUE(r.b) << r.b.error().ToString();
  EXPECT_TRUE(r.a->connected);
  EXPECT_EQ(r.a->remote->qps[0].qpn, (*b)->qp(0)->qp_num);
  EXPECT_FALSE(HasErrors(r.a->findings));
  EXPECT_GT(r.a->timings.open.count(), 0);
  EXPECT_GT(r.a->timings.exchange.count(), 0);
  EXPECT_GT(r.a->timings.connect.count(), 0);
  EXPECT_GT(r.a->timings.barrier.count(), 0);
  // Issue 15: each verbs step timed per QP, inside its phase.
  for (const verbs::QpStepTimes* s :
       {&r.a->timings.create, &r.a->timings.init, &r.a->timings.rtr, &r.a->timings.rts}) {
    EXPECT_EQ(s->qps, (*a)->num_qps());
    EXPECT_GT(s->p50.count(), 0);
    EXPECT_GE(s->p99, s->p50);
    EXPECT_GE(s->total, s->p99);
  }
  EXPECT_LE(r.a->timings.setup + r.a->timings.create.total + r.a->timings.init.total,
            r.a->timings.open);
  EXPECT_LE(r.a->timings.rtr.total + r.a->timings.rts.total, r.a->timings.connect);
  EXPECT_EQ(r.a->timings.round_trips, 2u);  // the exchange and the barrier

  EXPECT_TRUE(ProveTraffic(**a, **b, 50));
}

// Issue 15, pool mode: a connector that carried traffic is recycled (its QPs
// back to INIT, not destroyed) and connects to a new peer, whose traffic
// proof passes on the same QPNs.
TEST_F(ConnectorLabTest, RecycledQpsConnectToANewPeer) {
  verbs::SessionOptions oa = Owning(0, Transport::kRc);
  oa.num_qps = 4;
  verbs::SessionOptions ob = Owning(1, Transport::kRc);
  ob.num_qps = 4;
  auto a = Connector::Open(oa);
  ASSERT_TRUE(a) << a.error().ToString();
  auto traffic = [](Connector& x, Connector& y) { return ProveTraffic(x, y, 20); };
  std::vector<uint32_t> qpns;
  {
    auto b = Connector::Open(ob);
    ASSERT_TRUE(b) << b.error().ToString();
    Both r = ConnectBoth(**a, **b, Quick(), Quick());
    ASSERT_TRUE(r.a && r.b);
    ASSERT_TRUE(traffic(**a, **b));
    for (const auto& q : (*a)->Local().qps) qpns.push_back(q.qpn);
  }  // the first peer is gone
  ASSERT_TRUE((*a)->Recycle());
  EXPECT_FALSE((*a)->report().connected);
  EXPECT_GT((*a)->report().timings.open.count(), 0);
  EXPECT_EQ((*a)->report().timings.init.qps, 4u);
  ASSERT_EQ((*a)->Local().qps.size(), 4u);
  for (size_t i = 0; i < qpns.size(); ++i) EXPECT_EQ((*a)->Local().qps[i].qpn, qpns[i]);

  auto c = Connector::Open(ob);
  ASSERT_TRUE(c) << c.error().ToString();
  Both r = ConnectBoth(**a, **c, Quick(), Quick());
  ASSERT_TRUE(r.a) << r.a.error().ToString();
  ASSERT_TRUE(r.b) << r.b.error().ToString();
  EXPECT_TRUE(traffic(**a, **c));

  auto adopted_own = MakeOwnQps(env_.dev0, IBV_QPT_RC, 1);
  ASSERT_TRUE(adopted_own);
  auto adopted = Connector::Adopt(Adoptable(*adopted_own), Adopting(0));
  ASSERT_TRUE(adopted);
  auto refused = (*adopted)->Recycle();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
}

// Issue 19: a path source's PathRecord reaches the real QPs. Soft-RoCE has
// no subnet administrator, so both sides are given a record as
// sa::ResolvePeerPath would return it (the `sim` tests prove that function
// against OpenSM); the QPs then carry its MTU and ACK timeout, the report
// says what came from it, and the traffic proof passes.
TEST_F(ConnectorLabTest, APathSourcesRecordIsWhatTheQpsAreProgrammedWith) {
  auto a = Connector::Open(Owning(0, Transport::kRc));
  auto b = Connector::Open(Owning(1, Transport::kRc));
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  int calls = 0;
  ConnectorOptions o = Quick();
  o.path_source = [&calls](const EndpointInfo& local, const EndpointInfo& remote) {
    ++calls;
    PathRecord p;
    p.mtu = Mtu::k256;
    p.sl = 0;
    p.packet_lifetime = 17;  // ACK timeout 18
    p.rate = 3;              // 10 Gb/s: rxe takes the static rate (and ignores it)
    p.pkey = local.keys.pkey;
    p.hop_limit = 0;
    p.dgid = remote.path.sgid ? remote.path.sgid->gid : Gid{};
    return Result<PathRecord>(p);
  };
  ConnectorOptions ob = Quick();
  ob.path_source = o.path_source;
  Both r = ConnectBoth(**a, **b, o, ob);
  ASSERT_TRUE(r.a) << r.a.error().ToString();
  ASSERT_TRUE(r.b) << r.b.error().ToString();
  EXPECT_EQ(calls, 2);
  ASSERT_TRUE(r.a->sa_path.has_value());
  EXPECT_EQ(r.a->sa_path->mtu, Mtu::k256);
  const auto& from = r.a->plan->from_sa;
  EXPECT_NE(std::find(from.begin(), from.end(), "path_mtu"), from.end());
  EXPECT_NE(std::find(from.begin(), from.end(), "timeout"), from.end());
  EXPECT_NE(std::find(from.begin(), from.end(), "static_rate"), from.end());
  EXPECT_EQ(r.a->plan->qps.at(0).ah.static_rate, 3);
  EXPECT_GT(r.a->timings.path.count(), 0);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(
      ibv_query_qp((*a)->qp(0), &attr, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(attr.path_mtu, IBV_MTU_256);
  EXPECT_EQ(attr.timeout, 18);

  EXPECT_TRUE(ProveTraffic(**a, **b, 20));
}

// Issue 19: a path source that fails (here: "no path", as the SA answers for
// a peer outside every partition) refuses the connect before any modify, and
// the peer learns it at once, not at its deadline.
TEST_F(ConnectorLabTest, AFailedPathQueryRefusesBeforeAnyModifyAndTellsThePeer) {
  auto a = Connector::Open(Owning(0, Transport::kRc));
  auto b = Connector::Open(Owning(1, Transport::kRc));
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  ConnectorOptions o = Quick();
  o.path_source = [](const EndpointInfo&, const EndpointInfo&) -> Result<PathRecord> {
    return Error{ErrorCode::kNotFound, 0, "SA PathRecord query", "path", "the SA has no path"};
  };
  ConnectorOptions ob = Quick();
  ob.timeout = 20s;
  const auto start = std::chrono::steady_clock::now();
  Both r = ConnectBoth(**a, **b, o, ob);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.a);
  EXPECT_EQ(r.a.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.a.error().attribute, "path");
  EXPECT_EQ((*a)->report().reached, ConnectPhase::kValidate);
  EXPECT_FALSE((*a)->report().plan.has_value());
  ASSERT_FALSE(r.b);
  EXPECT_EQ(r.b.error().code, ErrorCode::kProtocol) << r.b.error().ToString();
  EXPECT_NE(r.b.error().detail.find("no path to the peer"), std::string::npos)
      << r.b.error().ToString();
  // The peer was told, not left to its 20 s deadline: half of it, room for
  // an emulated guest on a loaded host (the refusal itself is at once).
  EXPECT_LT(took, 10s);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(ibv_query_qp((*a)->qp(0), &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_INIT);  // nothing was modified
}

TEST_F(ConnectorLabTest, AdoptedRcQpsConnectAndCarryTheCallersOwnSendAndWrite) {
  const size_t n = 2;
  auto own_a = MakeOwnQps(env_.dev0, IBV_QPT_RC, n);
  auto own_b = MakeOwnQps(env_.dev1, IBV_QPT_RC, n);
  ASSERT_TRUE(own_a && own_b);
  auto a = Connector::Adopt(Adoptable(*own_a), Adopting(0));
  auto b = Connector::Adopt(Adoptable(*own_b), Adopting(1));
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ((*a)->session(), nullptr);
  EXPECT_EQ((*a)->qp(1), own_a->qps[1].get());

  // The caller posts its receives at INIT, before the barrier.
  for (size_t i = 0; i < n; ++i) {
    ibv_sge sge{reinterpret_cast<uint64_t>(own_b->Recv(i)), OwnQps::kSlot, own_b->mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_recv(own_b->qps[i].get(), &wr, &bad), 0);
  }
  Both r = ConnectBoth(**a, **b, Quick(), Quick());
  ASSERT_TRUE(r.a) << r.a.error().ToString();
  ASSERT_TRUE(r.b) << r.b.error().ToString();

  for (size_t i = 0; i < n; ++i) {
    // SEND a -> b, checked on b.
    std::string text = "adopted qp " + std::to_string(i);
    std::memcpy(own_a->Send(i), text.c_str(), text.size() + 1);
    ibv_sge sge{reinterpret_cast<uint64_t>(own_a->Send(i)), static_cast<uint32_t>(text.size() + 1),
                own_a->mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(own_a->qps[i].get(), &wr, &bad), 0);
    ibv_wc wc{};
    ASSERT_EQ(PollOne(*own_a->cq, wc), IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    ASSERT_EQ(PollOne(*own_b->cq, wc), IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(own_b->Recv(wc.wr_id))),
              "adopted qp " + std::to_string(wc.wr_id));

    // RDMA WRITE a -> b's published MR, checked in b's memory.
    const MrDescriptor& mr = *r.a->remote->qps[i].mr;
    std::memset(own_a->Send(i), 0x40 + static_cast<int>(i), OwnQps::kSlot);
    sge.length = OwnQps::kSlot;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = mr.addr;
    wr.wr.rdma.rkey = mr.rkey;
    ASSERT_EQ(ibv_post_send(own_a->qps[i].get(), &wr, &bad), 0);
    ASSERT_EQ(PollOne(*own_a->cq, wc), IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(own_b->Target(i)[0], 0x40 + i);
    EXPECT_EQ(own_b->Target(i)[OwnQps::kSlot - 1], 0x40 + i);
  }
}

TEST_F(ConnectorLabTest, AdoptedUdQpsGetAddressHandlesAndCarryDatagrams) {
  auto own_a = MakeOwnQps(env_.dev0, IBV_QPT_UD, 1);
  auto own_b = MakeOwnQps(env_.dev1, IBV_QPT_UD, 1);
  ASSERT_TRUE(own_a && own_b);
  auto a = Connector::Adopt(Adoptable(*own_a), Adopting(0));
  auto b = Connector::Adopt(Adoptable(*own_b), Adopting(1));
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ((*a)->ah(0), nullptr);  // none before Connect()
  ibv_sge rsge{reinterpret_cast<uint64_t>(own_b->Recv(0)), OwnQps::kSlot, own_b->mr->lkey};
  ibv_recv_wr rwr{};
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(ibv_post_recv(own_b->qps[0].get(), &rwr, &rbad), 0);
  // The largest datagram this caller sends (the validator checks it fits the MTU).
  ConnectorOptions o = Quick();
  o.plan.message_size = OwnQps::kSlot - 40;
  Both r = ConnectBoth(**a, **b, o, o);
  ASSERT_TRUE(r.a) << r.a.error().ToString();
  ASSERT_TRUE(r.b) << r.b.error().ToString();
  ASSERT_NE((*a)->ah(0), nullptr);
  EXPECT_EQ((*a)->remote_qpn(0), own_b->qps[0]->qp_num);

  const char text[] = "adopted datagram";
  std::memcpy(own_a->Send(0), text, sizeof text);
  ibv_sge sge{reinterpret_cast<uint64_t>(own_a->Send(0)), sizeof text, own_a->mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = (*a)->ah(0);
  wr.wr.ud.remote_qpn = (*a)->remote_qpn(0);
  wr.wr.ud.remote_qkey = (*a)->remote_qkey();
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(own_a->qps[0].get(), &wr, &bad), 0);
  ibv_wc wc{};
  ASSERT_EQ(PollOne(*own_a->cq, wc), IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  ASSERT_EQ(PollOne(*own_b->cq, wc), IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  // UD receives start with the 40-byte GRH.
  EXPECT_STREQ(reinterpret_cast<char*>(own_b->Recv(0)) + 40, text);
}

TEST_F(ConnectorLabTest, ValidationGateRefusesOnBothSidesBeforeAnyModify) {
  // Both sides force a path MTU (qp-connect -m), and they differ: mtu-mismatch.
  auto a = Connector::Open(Forced(Owning(0, Transport::kRc), Mtu::k1024));
  auto b = Connector::Open(Forced(Owning(1, Transport::kRc), Mtu::k256));
  ASSERT_TRUE(a && b);
  Both r = ConnectBoth(**a, **b, Quick(), Quick());
  ASSERT_FALSE(r.a);
  ASSERT_FALSE(r.b);
  EXPECT_EQ(r.a.error().code, ErrorCode::kIncompatible) << r.a.error().ToString();
  EXPECT_EQ(r.b.error().code, ErrorCode::kIncompatible) << r.b.error().ToString();
  EXPECT_EQ((*a)->report().reached, ConnectPhase::kValidate);
  EXPECT_TRUE(HasErrors((*a)->report().findings));
  EXPECT_FALSE((*a)->report().connected);
  for (Connector* c : {a->get(), b->get()}) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    ASSERT_EQ(ibv_query_qp(c->qp(0), &attr, IBV_QP_STATE, &init), 0);
    EXPECT_EQ(attr.qp_state, IBV_QPS_INIT);
  }
}

TEST_F(ConnectorLabTest, AdoptRefusesNullMixedAndConnectedQpsAndLeaksNothing) {
  const testing::Counts before = testing::CountAll(env_.dev0);
  {
    EXPECT_EQ(Connector::Adopt({}, Adopting(0)).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(Connector::Adopt({AdoptedQp{}}, Adopting(0)).error().code,
              ErrorCode::kInvalidArgument);
    auto rc = MakeOwnQps(env_.dev0, IBV_QPT_RC, 1);
    auto uc = MakeOwnQps(env_.dev0, IBV_QPT_UC, 1);
    ASSERT_TRUE(rc && uc);
    auto mixed = Connector::Adopt({{rc->qps[0].get(), {}}, {uc->qps[0].get(), {}}}, Adopting(0));
    ASSERT_FALSE(mixed);
    EXPECT_EQ(mixed.error().attribute, "qp_type");
    // A QP the caller already moved past INIT cannot be adopted.
    auto first = Connector::Adopt({{rc->qps[0].get(), {}}}, Adopting(0));
    ASSERT_TRUE(first) << first.error().ToString();
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ASSERT_EQ(ibv_modify_qp(rc->qps[0].get(), &attr, IBV_QP_STATE), 0);
    auto again = Connector::Adopt({{rc->qps[0].get(), {}}}, Adopting(0));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().attribute, "qp_state");
    EXPECT_NE(again.error().detail.find("ERR"), std::string::npos) << again.error().detail;
    // Refused connections release everything too.
    auto a = Connector::Open(Forced(Owning(0, Transport::kRc), Mtu::k1024));
    auto b = Connector::Open(Forced(Owning(1, Transport::kRc), Mtu::k256));
    ASSERT_TRUE(a && b);
    Both r = ConnectBoth(**a, **b, Quick(), Quick());
    EXPECT_FALSE(r.a);
  }
  EXPECT_EQ(testing::CountAll(env_.dev0), before);
}

}  // namespace
}  // namespace qpconnect
