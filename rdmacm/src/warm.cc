// SPDX-License-Identifier: MIT
#include "warm.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "id_part.h"
#include "link.h"
#include "log.h"
#include "qpconnect/composer.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/stream_session.h"
#include "qpconnect/rdmacm/protocol_version.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/qp_steps.h"
#include "qpconnect/verbs/resources.h"
#include "wire.h"

namespace qpconnect::rdmacm {
namespace {

constexpr std::chrono::seconds kRealWait{30};

std::atomic<bool> stop{false};  // set at exit

// A port to rehearse on before the program names one: RoCE v2, one GID.
EndpointInfo MadeUp() {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.active = true;
  e.port.active_mtu = e.port.max_mtu = Mtu::k1024;
  GidEntry g;
  g.index = 1;
  g.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
  g.type = GidType::kRoceV2;
  g.family = GidFamily::kIpv4;
  e.path.use_grh = true;
  e.path.sgid = g;
  e.gid_table = {g};
  return e;
}

std::unique_ptr<oob::StreamSession> WarmSession(oob::OobRole role) {
  oob::StreamOptions o;
  o.protocol = kProtocolName;
  o.version = kProtocolVersion;
  o.role = role;
  o.max_message_bytes = kMaxBody;
  auto s = oob::StreamSession::Create(std::move(o));
  return s ? std::move(*s) : nullptr;
}

// `msg` as the peer's link would read it, or nullopt.
std::optional<Message> CarriedOnce(const Message& msg) {
  auto from = WarmSession(oob::OobRole::kClient);
  auto to = WarmSession(oob::OobRole::kServer);
  if (!from || !to) return std::nullopt;
  std::string bytes = from->Hello();
  if (!from->AppendMessage(EncodeBody(msg), bytes)) return std::nullopt;
  auto hello = to->Take(bytes);
  if (!hello || hello->kind != oob::StreamInput::Kind::kHello) return std::nullopt;
  auto carried = to->Take(std::string_view(bytes).substr(hello->consumed));
  if (!carried || carried->kind != oob::StreamInput::Kind::kMessage) return std::nullopt;
  auto decoded = DecodeBody(carried->body);
  if (!decoded) return std::nullopt;
  return std::move(*decoded);
}

// A connection's code, once, over `port` seen as its own peer with two
// made-up QPs: the REQ's frame and the description rebuilt from a base, the
// description's encoding, the joint GID choice, the plan, the validator,
// the RTR and RTS attributes. Nothing is sent or modified. Returns early
// once `stop` is set (at exit).
void Rehearse(const EndpointInfo& port, const char* what, bool read_path) {
  EndpointInfo local = port, remote = port;
  IdPart part;
  part.qpn = 0x101;
  part.psn = 0x1001;
  ApplyIdPart(local, part);
  Message req;
  req.type = MsgType::kReq;
  req.qp_type = IBV_QPT_RC;
  req.params.qp_num = 0x102;
  req.psn = 0x1001;
  // Through a pair of the links' stream sessions (no key), as a link
  // carries it: hello and message in one write, taken by the other side.
  auto body = CarriedOnce(req);
  if (!body) return;
  auto theirs = IdPartOf(*body);
  if (!theirs) return;
  ApplyIdPart(remote, *theirs);
  if (stop) return;
  auto decoded = oob::DecodeBinary(oob::EncodeBinary(remote));
  if (!decoded || stop) return;
  // The composer's agreement as an id's accept or reply runs it (the path
  // facts only on a real port: a made-up one has no route to read), then
  // the RTR and RTS attributes.
  EndpointInfo peer = std::move(*decoded);
  ComposeOptions options;
  options.read_path = read_path;
  auto agreed = Composer(verbs::QpEnv::Default()).Agree(local, peer, options);
  if (agreed && !agreed->plan.qps.empty()) {
    (void)Composer::Gate(*agreed);
    (void)verbs::BuildRtr(Transport::kRc, agreed->plan.qps[0]);
    (void)verbs::BuildRts(Transport::kRc, agreed->plan.qps[0]);
  }
  QPCM_DEBUG_LINE(std::string("warm-up over ") + what + " done id 0");
}

// One RC QP on `port` of `ctx`, as librdmacm makes it for a program (two
// completion channels and CQs), moved INIT->RTR->RTS through the composer
// connected to itself, then destroyed (the owners, in reverse). Errors only
// end it early: it is a rehearsal.
void RehearseOnDevice(ibv_context& ctx, const EndpointInfo& port) {
  auto pd = verbs::AllocPd(ctx);
  if (!pd || stop) return;
  auto ch_recv = verbs::CreateCompChannel(ctx);
  auto ch_send = verbs::CreateCompChannel(ctx);
  if (!ch_recv || !ch_send) return;
  auto cq_recv = verbs::CreateCq(ctx, 1, ch_recv->get());
  auto cq_send = verbs::CreateCq(ctx, 1, ch_send->get());
  if (!cq_recv || !cq_send) return;
  ibv_qp_init_attr init{};
  init.send_cq = cq_send->get();
  init.recv_cq = cq_recv->get();
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  auto qp = verbs::CreateQp(**pd, init);
  if (!qp || stop) return;
  verbs::VerbsQpControl control(**qp);
  QpAttrs attrs;
  attrs.port_num = port.port.port_num;
  constexpr unsigned kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  if (!verbs::MoveToInit(control, Transport::kRc, attrs, kAccess)) return;
  EndpointInfo self = port;
  IdPart part;
  part.qpn = (*qp)->qp_num & kQpnMask;
  part.psn = 0x1001;
  ApplyIdPart(self, part);
  EndpointInfo peer = self;
  const Composer composer(verbs::QpEnv::Default());
  auto agreed = composer.Agree(self, peer, ComposeOptions{});
  if (!agreed || stop) return;
  verbs::QpControl* controls[] = {&control};
  QpSet set;
  set.qps = controls;
  set.context = &ctx;
  set.port = port.port.port_num;
  Applied applied;
  auto done = composer.Apply(*agreed, self, set, applied);
  QPCM_DEBUG_LINE(std::string("warm-up on the device: a QP connected to itself ") +
                  (done ? "at RTS" : "refused (" + done.error().ToString() + ")") + " id 0");
}

std::mutex real_mu;
std::condition_variable real_cv;
std::optional<EndpointInfo> real;  // the first port described, to rehearse on
ibv_context* real_ctx = nullptr;   // its device
bool real_offered = false;         // once per process
std::thread* worker = nullptr;     // never freed: joined at exit
pid_t worker_pid = 0;

// At exit, before the static objects the warm-up uses are destroyed (this
// handler was registered after they were made): stop after the current
// phase and wait for it. A forked child has no such thread to wait for.
void JoinAtExit() {
  {
    std::lock_guard<std::mutex> guard(real_mu);
    stop = true;
  }
  real_cv.notify_all();
  if (worker != nullptr && worker->joinable() && getpid() == worker_pid) worker->join();
}

}  // namespace

void WarmUpOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The engine thread first, rather than at the first dial
    // (rdma_resolve_addr): the dial then needs no thread created. (At N = 1
    // the link's connect completed 17 ms after ADDR_RESOLVED with the
    // engine started by the dial, 22 ms with it started here: the thread's
    // start is not what delays it; the vCPUs busy with the program's and
    // this warm-up's first runs of their code are.)
    (void)EngineIo();
    worker_pid = getpid();
    worker = new std::thread([] {
      Rehearse(MadeUp(), "a made-up port", false);
      // Then, once a port is described (rdma_resolve_addr, rdma_listen on
      // an address), the same over its description; a process that
      // describes none within the wait has its thread back.
      std::unique_lock<std::mutex> guard(real_mu);
      real_cv.wait_for(guard, kRealWait, [] { return stop.load() || real.has_value(); });
      if (stop || !real) return;
      EndpointInfo port = std::move(*real);
      ibv_context* ctx = real_ctx;
      real.reset();
      guard.unlock();
      Rehearse(port, "this process's port", true);
      if (ctx != nullptr && !stop) RehearseOnDevice(*ctx, port);
    });
    std::atexit(JoinAtExit);
  });
}

void WarmUpWith(const EndpointInfo& port, ibv_context* ctx) {
  {
    std::lock_guard<std::mutex> guard(real_mu);
    if (real_offered || stop) return;
    real_offered = true;
    real = port;
    real_ctx = ctx;
  }
  real_cv.notify_all();
}

}  // namespace qpconnect::rdmacm
