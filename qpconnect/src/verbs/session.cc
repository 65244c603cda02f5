// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/session.h"

#include <endian.h>
#include <fcntl.h>

#include <algorithm>
#include <cstdlib>

#include "qpconnect/traffic_stats.h"
#include "qpconnect/verbs/describe.h"
#include "qpconnect/verbs/provider.h"
#include "qpconnect/verbs/provider_cache.h"
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

using StepClock = std::chrono::steady_clock;

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
  const auto setup_start = StepClock::now();
  std::vector<ProviderCacheEntry> cached;
  ProviderPreload preload;
  if (!o.provider_cache.empty()) {
    // What a WarmDeviceList() of this cache already did (qp-connect's
    // warm-up thread) is not done again.
    if (auto warmed = TakeWarmedProviders(o.provider_cache)) {
      cached = std::move(warmed->entries);
      preload = std::move(warmed->preload);
    } else {
      cached = ReadProviderCache(o.provider_cache);
      preload = PreloadProviders(CachedLibraries(cached));
    }
    provider_.refused = preload.refused;
  }
  auto ctx = OpenDevice(o.device);
  if (!ctx) return std::move(ctx).error();
  ctx_ = std::move(*ctx);
  if (auto library = ProviderLibraryOf(ctx_.get())) {
    provider_.library = *library;
    for (const auto& l : preload.loaded) provider_.preloaded = provider_.preloaded || l == *library;
    const std::string device = ibv_get_device_name(ctx_->device);
    // Only when the entries read before the open lack this device's (or
    // name another library) is the file read again, since another process
    // may have added its own device meanwhile, and rewritten.
    if (!o.provider_cache.empty() && RememberProvider(cached, device, *library)) {
      cached = ReadProviderCache(o.provider_cache);
      if (RememberProvider(cached, device, *library)) {
        if (auto written = WriteProviderCache(o.provider_cache, cached); !written) {
          provider_.cache_error = written.error().ToString();
        }
      }
    }
  }

  QpEnv& env = o.qp_env != nullptr ? *o.qp_env : QpEnv::Default();
  auto described = env.Describe(*ctx_, o);  // the embedded DescribeOptions
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
  auto layout = PlanSessionLayout(
      {o.transport, o.num_qps, o.message_size, o.rx_depth, o.shared_buffers}, limits);
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
  if (o.completion_events) {
    auto ch = CreateCompChannel(*ctx_);
    if (!ch) return std::move(ch).error();
    channel_ = std::move(*ch);
    // Waits poll() the fd first; non-blocking, a stray wake-up cannot block
    // in ibv_get_cq_event.
    const int flags = ::fcntl(channel_->fd, F_GETFL);
    if (flags < 0 || ::fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      return ErrnoError(ErrorCode::kIo, errno, "make the completion channel non-blocking");
    }
  }
  auto scq = CreateCq(*ctx_, layout_.send_cqe, channel_.get());
  if (!scq) return std::move(scq).error();
  send_cq_ = std::move(*scq);
  auto rcq = CreateCq(*ctx_, layout_.recv_cqe, channel_.get());
  if (!rcq) return std::move(rcq).error();
  recv_cq_ = std::move(*rcq);
  auto mr = RegMr(*pd_, buffer_.get(), layout_.buffer_bytes, DefaultAccessFlags(o.transport));
  if (!mr) return std::move(mr).error();
  mr_ = std::move(*mr);
  timings_.setup = StepClock::now() - setup_start;

  std::vector<std::chrono::nanoseconds> create_samples;
  create_samples.reserve(o.num_qps);
  // Summarized on every path, as far as the QPs got.
  struct Summary {
    QpStepTimes& out;
    std::vector<std::chrono::nanoseconds>& samples;
    ~Summary() { out = SummarizeQpStep(samples); }
  } summary{timings_.create, create_samples};
  qps_.reserve(o.num_qps);
  for (uint32_t i = 0; i < o.num_qps; ++i) {
    const auto start = StepClock::now();
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
    controls_.push_back(env.Control(*qps_.back()));
    control_ptrs_.push_back(controls_.back().get());
    create_samples.push_back(StepClock::now() - start);
    if (o.on_progress) o.on_progress("create", i + 1, o.num_qps);
  }

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
  QpAttrs a;
  a.port_num = options_.port;
  a.pkey_index = local_.keys.pkey_index;
  a.qkey = options_.qkey;
  return InitQps(
      control_ptrs_, options_.transport, a, DefaultAccessFlags(options_.transport),
      [this](size_t i) { return PostAllRecvs(i); }, options_.on_progress, timings_.init);
}

Result<void> Session::Connect(const ConnectionPlan& plan, const EndpointInfo& remote,
                              const std::string& hint, const ProgressFn& progress_fn) {
  const ProgressFn& progress = progress_fn ? progress_fn : options_.on_progress;
  if (plan.qps.size() != qps_.size()) {
    return Error{ErrorCode::kIncompatible, 0, "connect", "qps",
                 "this side has " + std::to_string(qps_.size()) + " QPs, the plan " +
                     std::to_string(plan.qps.size()) + " (the peer offered " +
                     std::to_string(remote.qps.size()) + ")"};
  }
  // The one order (verbs/qp_steps.h): every QP to RTR, then every QP to RTS.
  ConnectTimes times;
  PeerHandles peer;
  auto done = ConnectToPlan(
      control_ptrs_, options_.transport, plan, hint,
      options_.qp_env != nullptr ? *options_.qp_env : QpEnv::Default(),
      [this](size_t) -> ibv_pd& { return *pd_; }, progress, peer, times);
  Connected(plan, std::move(peer), times);
  return done;
}

void Session::Connected(const ConnectionPlan& plan, PeerHandles peer, const ConnectTimes& times) {
  remote_qpns_ = std::move(peer.remote_qpns);
  ahs_ = std::move(peer.ahs);
  timings_.rtr = times.rtr;
  timings_.rts = times.rts;
  // UD sends carry our own Q_Key unless the plan overrides it: a Q_Key
  // mismatch then shows as silently dropped datagrams, as the rule predicts.
  send_qkey_ = UdSendQkey(plan, options_.qkey);
}

Result<void> Session::Recycle() {
  const auto start = StepClock::now();
  ahs_.clear();
  remote_qpns_.clear();
  send_qkey_ = 0;
  QPC_TRY(ResetQps(control_ptrs_, options_.transport));
  // What the old connection left in the CQs belongs to no one now.
  ibv_wc wc[64];
  for (ibv_cq* cq : {send_cq_.get(), recv_cq_.get()}) {
    int n = 0;
    while ((n = ibv_poll_cq(cq, 64, wc)) > 0) {
    }
    if (n < 0) return VerbsError("ibv_poll_cq", -n, "draining the CQ (recycle)");
  }
  QPC_TRY(MoveToInit());
  std::vector<uint32_t> qpns;
  std::vector<std::optional<MrDescriptor>> mrs;
  qpns.reserve(local_.qps.size());
  mrs.reserve(local_.qps.size());
  for (const QpEntry& q : local_.qps) {
    qpns.push_back(q.qpn);
    mrs.push_back(q.mr);
  }
  local_.qps.clear();
  AddQps(local_, qpns, options_.psn.value_or(RandomPsn()), mrs);
  timings_.recycle = StepClock::now() - start;
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

Result<void> Session::PostAllRecvs(size_t i) {
  const uint32_t n = options_.rx_depth;
  std::vector<ibv_sge> sges(n);
  std::vector<ibv_recv_wr> wrs(n);
  for (uint32_t slot = 0; slot < n; ++slot) {
    sges[slot] = ibv_sge{reinterpret_cast<uint64_t>(RecvSlot(i, slot)), RecvSlotBytes(), mr_->lkey};
    ibv_recv_wr& wr = wrs[slot];
    wr.wr_id = (uint64_t{i} << 32) | slot;
    wr.sg_list = &sges[slot];
    wr.num_sge = 1;
    wr.next = slot + 1 < n ? &wrs[slot + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qps_[i].get(), wrs.data(), &bad); rc != 0) {
    const auto at = bad == nullptr ? 0 : static_cast<size_t>(bad - wrs.data());
    return VerbsError("ibv_post_recv", rc,
                      "receive " + std::to_string(at) + " of " + std::to_string(n) + " on QP " +
                          std::to_string(i));
  }
  return Ok();
}

Result<void> Session::PostSend(size_t i, uint32_t length, std::optional<uint32_t> imm) {
  ibv_sge sge{reinterpret_cast<uint64_t>(SendArea(i)), length, mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = i;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
  if (imm) wr.imm_data = htobe32(*imm);
  wr.send_flags = IBV_SEND_SIGNALED;
  if (options_.transport == Transport::kUd) {
    wr.wr.ud.ah = ahs_.at(i).get();
    wr.wr.ud.remote_qpn = remote_qpns_.at(i);
    wr.wr.ud.remote_qkey = send_qkey_;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qps_[i].get(), &wr, &bad); rc != 0) {
    return VerbsError(imm ? "ibv_post_send SEND_WITH_IMM" : "ibv_post_send SEND", rc);
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
