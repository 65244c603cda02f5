// SPDX-License-Identifier: MIT
// The C API (<qpconnect/qpconnect.h>) against the real kernel verbs stack: two
// connectors in one process, one per lab device (rxe0, rxe1), each side on its
// own thread with a byte channel (qpc_channel) over one socketpair. Owning RC
// and UD with the library's traffic proof, adopted RC with the caller's QP,
// the validation gate's findings through the C accessors, and nothing leaked
// (rdma resource counts before and after).
// Runs inside the Soft-RoCE lab (label `lab`); skipped elsewhere.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <string>

#include "lab_env.h"
#include "qpconnect/qpconnect.h"
#include "rdma_resources.h"
#include "unit/capi/fd_channel.h"

namespace qpconnect {
namespace {

constexpr int kTimeoutMs = 20000;

// True if `qp` exists and is in `state` (ibv_query_qp).
bool InState(ibv_qp* qp, ibv_qp_state state) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  return ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0 && attr.qp_state == state;
}

// What one side's run reports back to the test thread.
struct SideResult {
  qpc_status status = QPC_ERR_INTERNAL;
  std::string message;  // the error's text, or what the side found
};

// Runs `side(0, exchanger)` and `side(1, exchanger)` on two threads over one
// socketpair. Each side frees what it creates before it returns.
using SideFn = std::function<SideResult(int side, qpc_exchanger* x)>;

std::pair<SideResult, SideResult> RunPair(const SideFn& side) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return {};
  testing::FdChannel ch[2];
  ch[0].fd = fds[0];
  ch[1].fd = fds[1];
  auto run = [&](int i) {
    qpc_channel c = testing::ChannelOf(ch[i]);
    qpc_exchanger* x = nullptr;
    qpc_error* err = nullptr;
    SideResult r;
    r.status = qpc_exchanger_from_channel(&c, nullptr, &x, &err);
    if (r.status == QPC_OK) {
      r = side(i, x);
    } else {
      r.message = qpc_error_message(err);
    }
    qpc_exchanger_free(x);
    qpc_error_free(err);
    return r;
  };
  auto one = std::async(std::launch::async, run, 1);
  SideResult zero = run(0);
  SideResult other = one.get();
  close(fds[0]);
  close(fds[1]);
  return {zero, other};
}

class CapiLabTest : public testing::LabFixture {
 protected:
  void SetUp() override {
    LabFixture::SetUp();
    if (!InLab()) return;
    before_[0] = testing::CountAll(env_.dev0);
    before_[1] = testing::CountAll(env_.dev1);
  }
  void TearDown() override {
    if (!InLab()) return;
    EXPECT_EQ(testing::CountAll(env_.dev0), before_[0]) << "rdma resources leaked on " << env_.dev0;
    EXPECT_EQ(testing::CountAll(env_.dev1), before_[1]) << "rdma resources leaked on " << env_.dev1;
  }

  const std::string& Dev(int side) const { return side == 0 ? env_.dev0 : env_.dev1; }
  int Gid(int side) const { return side == 0 ? env_.gid0 : env_.gid1; }

  qpc_open_options Open(int side, qpc_transport t) const {
    qpc_open_options o;
    qpc_open_options_init(&o);
    o.device = Dev(side).c_str();
    o.gid_index = Gid(side);
    o.transport = t;
    o.message_size = t == QPC_TRANSPORT_UD ? 1024 : 4096;
    return o;
  }

  // Owning mode on `side`: open, connect, then `after` (while connected),
  // then the library's traffic proof and a "done" barrier; frees all.
  SideResult Owning(int side, qpc_exchanger* x, const qpc_open_options& o,
                    const std::function<std::string(qpc_connector*)>& after = {}) {
    qpc_connector* c = nullptr;
    qpc_error* err = nullptr;
    SideResult r;
    qpc_connect_options co;
    qpc_connect_options_init(&co);
    co.timeout_ms = kTimeoutMs;
    qpc_traffic_options to;
    qpc_traffic_options_init(&to);
    to.iters = 50;
    to.timeout_ms = kTimeoutMs;
    qpc_traffic_report tr{};
    if ((r.status = qpc_connector_open(&o, &c, &err)) == QPC_OK &&
        (r.status = qpc_connector_connect(c, x, &co, &err)) == QPC_OK) {
      if (after) r.message = after(c);
      r.status = qpc_run_traffic(c, side == 1 ? QPC_ROLE_CLIENT : QPC_ROLE_SERVER, &to, &tr, &err);
      if (r.status == QPC_OK) r.status = qpc_exchanger_barrier(x, "done", kTimeoutMs, &err);
      if (r.status == QPC_OK && tr.messages == 0) r.message += " no messages counted";
    }
    if (r.status != QPC_OK) r.message = qpc_error_message(err);
    qpc_connector_free(c);
    qpc_error_free(err);
    return r;
  }

  // Both sides succeeded and found nothing wrong.
  static void ExpectClean(const std::pair<SideResult, SideResult>& r) {
    EXPECT_EQ(r.first.status, QPC_OK) << r.first.message;
    EXPECT_EQ(r.second.status, QPC_OK) << r.second.message;
    EXPECT_EQ(r.first.message, "");
    EXPECT_EQ(r.second.message, "");
  }

  testing::Counts before_[2]{};
};

TEST_F(CapiLabTest, OwningRcConnectsPassesTheTrafficProofAndFreesEverything) {
  auto r = RunPair([&](int side, qpc_exchanger* x) {
    qpc_open_options o = Open(side, QPC_TRANSPORT_RC);
    o.num_qps = 2;
    return Owning(side, x, o, [](qpc_connector* c) {
      std::string problems;
      for (size_t i = 0; i < qpc_connector_num_qps(c); ++i) {
        if (!InState(qpc_connector_qp(c, i), IBV_QPS_RTS)) {
          problems += " QP " + std::to_string(i) + " not at RTS;";
        }
        qpc_mr_desc mr{};
        if (qpc_connector_remote_mr(c, i, &mr, nullptr) != QPC_OK || mr.rkey == 0) {
          problems += " no remote MR for QP " + std::to_string(i) + ";";
        }
      }
      qpc_timings t{};
      qpc_connector_timings(c, &t);
      if (!qpc_connector_connected(c) || qpc_connector_reached(c) != QPC_PHASE_BARRIER ||
          t.exchange_ns == 0 || t.connect_ns == 0) {
        problems += " report incomplete;";
      }
      return problems;
    });
  });
  ExpectClean(r);
}

TEST_F(CapiLabTest, OwningUdGivesTheAddressHandleRemoteQpnAndQkey) {
  auto r = RunPair([&](int side, qpc_exchanger* x) {
    return Owning(side, x, Open(side, QPC_TRANSPORT_UD), [](qpc_connector* c) {
      char* remote = nullptr;
      std::string problems;
      if (qpc_connector_ah(c, 0) == nullptr) problems += " no AH;";
      if (qpc_connector_remote_qkey(c) != 0x11111111u) problems += " wrong Q_Key;";
      if (qpc_connector_remote_json(c, &remote, nullptr) != QPC_OK) return problems + " no JSON";
      // The remote QPN to send to is the one the peer published.
      const std::string qpn = "\"qpn\": " + std::to_string(qpc_connector_remote_qpn(c, 0));
      if (std::strstr(remote, qpn.c_str()) == nullptr) problems += " remote qpn not " + qpn;
      qpc_string_free(remote);
      return problems;
    });
  });
  ExpectClean(r);
}

TEST_F(CapiLabTest, GateRefusesOnBothSidesWithTheFindingsAndQpsLeftInInit) {
  auto r = RunPair([&](int side, qpc_exchanger* x) {
    qpc_open_options o = Open(side, QPC_TRANSPORT_RC);
    o.mtu = side == 0 ? 1024 : 256;  // both force (announce and plan) different MTUs
    qpc_connect_options co;
    qpc_connect_options_init(&co);
    co.timeout_ms = kTimeoutMs;
    qpc_connector* c = nullptr;
    qpc_error* err = nullptr;
    SideResult s;
    s.status = qpc_connector_open(&o, &c, &err);
    if (s.status == QPC_OK) s.status = qpc_connector_connect(c, x, &co, &err);
    s.message = qpc_error_message(err);
    if (s.status == QPC_ERR_INCOMPATIBLE && c != nullptr) {
      // The refusing side names the rule; the other learns of it as an abort.
      for (size_t i = 0; i < qpc_connector_finding_count(c); ++i) {
        qpc_finding f{};
        if (qpc_connector_finding(c, i, &f, nullptr) == QPC_OK &&
            f.severity == QPC_SEVERITY_ERROR && std::strcmp(f.id, "mtu-mismatch") == 0) {
          s.message = std::string("found: ") + f.text;
        }
      }
      if (!InState(qpc_connector_qp(c, 0), IBV_QPS_INIT)) s.message += " (QP left INIT)";
      if (qpc_connector_reached(c) != QPC_PHASE_VALIDATE) s.message += " (not at validate)";
    }
    qpc_connector_free(c);
    qpc_error_free(err);
    return s;
  });
  EXPECT_EQ(r.first.status, QPC_ERR_INCOMPATIBLE) << r.first.message;
  EXPECT_EQ(r.second.status, QPC_ERR_INCOMPATIBLE) << r.second.message;
  EXPECT_EQ(r.first.message.rfind("found: ", 0), 0u) << r.first.message;
  EXPECT_EQ(r.second.message.rfind("found: ", 0), 0u) << r.second.message;
}

// The caller's own RC QP and MR, made with plain libibverbs.
struct OwnRc {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  void* buf = nullptr;
  ibv_mr* mr = nullptr;

  explicit OwnRc(const std::string& dev) {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    for (int i = 0; list != nullptr && i < n; ++i) {
      if (dev == ibv_get_device_name(list[i])) ctx = ibv_open_device(list[i]);
    }
    if (list != nullptr) ibv_free_device_list(list);
    if (ctx != nullptr) pd = ibv_alloc_pd(ctx);
    if (pd != nullptr) cq = ibv_create_cq(ctx, 8, nullptr, nullptr, 0);
    if (cq == nullptr) return;
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = init.cap.max_recv_wr = 2;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &init);
    buf = std::calloc(1, 4096);
    mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  }
  ~OwnRc() {
    if (mr != nullptr) ibv_dereg_mr(mr);
    std::free(buf);
    if (qp != nullptr) ibv_destroy_qp(qp);
    if (cq != nullptr) ibv_destroy_cq(cq);
    if (pd != nullptr) ibv_dealloc_pd(pd);
    if (ctx != nullptr) ibv_close_device(ctx);
  }
  OwnRc(const OwnRc&) = delete;
  OwnRc& operator=(const OwnRc&) = delete;
};

TEST_F(CapiLabTest, AdoptedRcConnectsPublishesItsMrAndStaysTheCallers) {
  auto r = RunPair([&](int side, qpc_exchanger* x) {
    OwnRc own(Dev(side));
    SideResult s;
    if (own.mr == nullptr || own.qp == nullptr) return SideResult{QPC_ERR_VERBS, "setup failed"};
    const qpc_mr_desc mine{reinterpret_cast<uint64_t>(own.buf), own.mr->rkey, 4096};
    const qpc_adopted_qp q{own.qp, &mine};
    qpc_adopt_options ao;
    qpc_adopt_options_init(&ao);
    ao.gid_index = Gid(side);
    qpc_connector* c = nullptr;
    qpc_error* err = nullptr;
    qpc_mr_desc theirs{};
    if ((s.status = qpc_connector_adopt(&q, 1, &ao, &c, &err)) == QPC_OK &&
        (s.status = qpc_connector_connect(c, x, nullptr, &err)) == QPC_OK &&
        (s.status = qpc_connector_remote_mr(c, 0, &theirs, &err)) == QPC_OK) {
      if (qpc_connector_qp(c, 0) != own.qp) s.message += " not the caller's QP;";
      if (theirs.length != 4096 || theirs.rkey == 0) s.message += " peer MR wrong;";
      if (qpc_connector_send_cq(c) != nullptr) s.message += " adopted has a library CQ;";
      void* addr = nullptr;
      if (qpc_connector_buffer(c, 0, QPC_BUFFER_SEND, 0, &addr, nullptr, nullptr) !=
          QPC_ERR_INVALID_ARGUMENT) {
        s.message += " adopted gave a library buffer;";
      }
      s.status = qpc_exchanger_barrier(x, "done", kTimeoutMs, &err);
    }
    if (s.status != QPC_OK) s.message = qpc_error_message(err);
    qpc_connector_free(c);
    // Freeing the connector leaves the caller's QP alive, at RTS.
    if (s.status == QPC_OK && !InState(own.qp, IBV_QPS_RTS)) {
      s.message += " the caller's QP is gone or not at RTS after free;";
    }
    qpc_error_free(err);
    return s;
  });
  ExpectClean(r);
}

}  // namespace
}  // namespace qpconnect
