#include "qpconnect/verbs/session.h"

#include <algorithm>
#include <cstdlib>

#include "qpconnect/verbs/describe.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/qp_steps.h"
#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::verbs {
namespace {

constexpr size_t kAlign = 4096;

Error Invalid(std::string attribute, std::string detail) {
  return Error{ErrorCode::kInvalidArgument, 0, "open session", std::move(attribute),
               std::move(detail)};
}

}  // namespace

void Session::BufferFree::operator()(uint8_t* p) const noexcept { std::free(p); }

Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  if (options.num_qps == 0) return Invalid("qps", "at least one QP is needed");
  if (options.message_size == 0) return Invalid("size", "message size must be at least 1 byte");
  if (options.rx_depth == 0) return Invalid("rx-depth", "at least one receive must be posted");
  if (options.psn && *options.psn > kPsnMask) {
    return Invalid("sq_psn", "PSN " + std::to_string(*options.psn) + " exceeds 24 bits");
  }
  std::unique_ptr<Session> s(new Session());
  s->options_ = options;
  QPC_TRY(s->CreateResources());
  QPC_TRY(s->MoveToInit());
  return s;
}

Result<void> Session::CreateResources() {
  const SessionOptions& o = options_;
  auto ctx = OpenDevice(o.device);
  if (!ctx) return std::move(ctx).error();
  ctx_ = std::move(*ctx);

  DescribeOptions d;
  d.transport = o.transport;
  d.port = o.port;
  d.gid = o.gid;
  d.pkey_index = o.pkey_index;
  d.pkey_value = o.pkey_value;
  d.qkey = o.qkey;
  d.sl = o.sl;
  d.traffic_class = o.traffic_class;
  d.flow_label = o.flow_label;
  d.mtu = o.mtu;
  d.max_rd_atomic = o.max_rd_atomic;
  d.max_dest_rd_atomic = o.max_dest_rd_atomic;
  d.host = o.host;
  auto described = DescribeLocal(*ctx_, d);
  if (!described) return std::move(described).error();
  local_ = std::move(described->endpoint);
  const DeviceLimits& limits = described->limits;
  const Mtu active_mtu = local_.port.active_mtu;
  if (o.transport == Transport::kUd &&
      o.message_size > static_cast<uint32_t>(MtuBytes(active_mtu))) {
    return Invalid("size", "UD message size " + std::to_string(o.message_size) +
                               " exceeds the port's active MTU " +
                               std::to_string(MtuBytes(active_mtu)));
  }

  // Every size checked against the device, in 64 bits, before anything is
  // created (session_layout.h): nothing is clamped.
  auto layout = PlanSessionLayout({o.transport, o.num_qps, o.message_size, o.rx_depth}, limits);
  if (!layout) return std::move(layout).error();
  layout_ = *layout;
  buffer_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, layout_.buffer_bytes)));
  if (!buffer_) {
    return ErrnoError(ErrorCode::kIo, ENOMEM, "allocate buffers",
                      std::to_string(layout_.buffer_bytes) + " bytes");
  }
  std::fill_n(buffer_.get(), layout_.buffer_bytes, uint8_t{0});

  auto pd = AllocPd(*ctx_);
  if (!pd) return std::move(pd).error();
  pd_ = std::move(*pd);
  auto scq = CreateCq(*ctx_, layout_.send_cqe, nullptr);
  if (!scq) return std::move(scq).error();
  send_cq_ = std::move(*scq);
  auto rcq = CreateCq(*ctx_, layout_.recv_cqe, nullptr);
  if (!rcq) return std::move(rcq).error();
  recv_cq_ = std::move(*rcq);

  for (uint32_t i = 0; i < o.num_qps; ++i) {
    ibv_qp_init_attr init{};
    init.send_cq = send_cq_.get();
    init.recv_cq = recv_cq_.get();
    init.qp_type = ToIbvQpType(o.transport);
    init.cap.max_send_wr = kSendDepth;
    init.cap.max_recv_wr = o.rx_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.sq_sig_all = 1;
    auto qp = CreateQp(*pd_, init);
    if (!qp) {
      Error e = std::move(qp).error();
      e.detail += " (QP " + std::to_string(i + 1) + " of " + std::to_string(o.num_qps) + ")";
      return e;
    }
    qps_.push_back(std::move(*qp));
  }
  auto mr = RegMr(*pd_, buffer_.get(), layout_.buffer_bytes, DefaultAccessFlags(o.transport));
  if (!mr) return std::move(mr).error();
  mr_ = std::move(*mr);

  // Describe our QPs.
  std::vector<uint32_t> qpns;
  std::vector<std::optional<MrDescriptor>> mrs;
  for (size_t i = 0; i < qps_.size(); ++i) {
    qpns.push_back(qps_[i]->qp_num);
    if (o.transport != Transport::kUd) {
      mrs.push_back(MrDescriptor{reinterpret_cast<uint64_t>(RdmaTarget(i)), mr_->rkey,
                                 uint64_t{o.message_size} * 2});
    } else {
      mrs.emplace_back();
    }
  }
  AddQps(local_, qpns, o.psn.value_or(RandomPsn()), mrs);
  return Ok();
}

Result<void> Session::MoveToInit() {
  for (size_t i = 0; i < qps_.size(); ++i) {
    QpAttrs a;
    a.port_num = options_.port;
    a.pkey_index = local_.keys.pkey_index;
    a.qkey = options_.qkey;
    VerbsQpControl control(*qps_[i]);
    QPC_TRY(
        verbs::MoveToInit(control, options_.transport, a, DefaultAccessFlags(options_.transport)));
    for (uint32_t slot = 0; slot < options_.rx_depth; ++slot) QPC_TRY(PostRecv(i, slot));
  }
  return Ok();
}

Result<void> Session::Connect(const ConnectionPlan& plan, const EndpointInfo& remote,
                              const std::string& hint) {
  if (plan.qps.size() != qps_.size()) {
    return Error{ErrorCode::kIncompatible, 0, "connect", "qps",
                 "this side has " + std::to_string(qps_.size()) + " QPs, the plan " +
                     std::to_string(plan.qps.size()) + " (the peer offered " +
                     std::to_string(remote.qps.size()) + ")"};
  }
  remote_qpns_.clear();
  for (size_t i = 0; i < qps_.size(); ++i) {
    VerbsQpControl control(*qps_[i]);
    QPC_TRY(MoveToRts(control, options_.transport, plan.qps[i], hint));
    remote_qpns_.push_back(plan.qps[i].dest_qp_num);
    if (options_.transport == Transport::kUd) {
      auto ah = CreateAh(*pd_, ToAhAttr(plan.qps[i].ah));
      if (!ah) {
        Error e = std::move(ah).error();
        if (!hint.empty()) e.detail += "; " + hint;
        return e;
      }
      ahs_.push_back(std::move(*ah));
    }
  }
  // UD sends carry our own Q_Key unless the plan overrides it: a Q_Key
  // mismatch then shows as silently dropped datagrams, as the rule predicts.
  send_qkey_ = UdSendQkey(plan, options_.qkey);
  return Ok();
}

uint8_t* Session::SendArea(size_t i) { return buffer_.get() + layout_.Send(i); }
uint32_t Session::RecvSlotBytes() const { return layout_.recv_slot_bytes; }
uint8_t* Session::RecvSlot(size_t i, uint32_t slot) {
  return buffer_.get() + layout_.Recv(i, slot);
}
uint8_t* Session::RdmaTarget(size_t i) { return buffer_.get() + layout_.RdmaTarget(i); }
uint8_t* Session::RdmaSource(size_t i) { return buffer_.get() + layout_.RdmaSource(i); }
uint8_t* Session::ReadBack(size_t i) { return buffer_.get() + layout_.ReadBack(i); }

Result<void> Session::PostRecv(size_t i, uint32_t slot) {
  ibv_sge sge{reinterpret_cast<uint64_t>(RecvSlot(i, slot)), RecvSlotBytes(), mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = (uint64_t{i} << 32) | slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qps_[i].get(), &wr, &bad); rc != 0) {
    return VerbsError("ibv_post_recv", rc);
  }
  return Ok();
}

Result<void> Session::PostSend(size_t i, uint32_t length) {
  ibv_sge sge{reinterpret_cast<uint64_t>(SendArea(i)), length, mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = i;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (options_.transport == Transport::kUd) {
    wr.wr.ud.ah = ahs_.at(i).get();
    wr.wr.ud.remote_qpn = remote_qpns_.at(i);
    wr.wr.ud.remote_qkey = send_qkey_;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qps_[i].get(), &wr, &bad); rc != 0) {
    return VerbsError("ibv_post_send SEND", rc);
  }
  return Ok();
}

Result<void> Session::PostRdma(size_t i, ibv_wr_opcode opcode, uint32_t length,
                               uint64_t remote_addr, uint32_t rkey) {
  uint8_t* local = opcode == IBV_WR_RDMA_READ ? ReadBack(i) : SendArea(i);
  ibv_sge sge{reinterpret_cast<uint64_t>(local), length, mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = i;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qps_[i].get(), &wr, &bad); rc != 0) {
    return VerbsError(
        opcode == IBV_WR_RDMA_READ ? "ibv_post_send RDMA_READ" : "ibv_post_send RDMA_WRITE", rc);
  }
  return Ok();
}

}  // namespace qpconnect::verbs
