#include "warm.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "id_part.h"
#include "link.h"
#include "log.h"
#include "qpconnect/gid_pair.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "wire.h"

namespace qpconnect::rdmacm {
namespace {

constexpr std::chrono::seconds kRealWait{30};

EndpointInfo MadeUp(uint8_t last) {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.active = true;
  e.port.active_mtu = e.port.max_mtu = Mtu::k1024;
  GidEntry g;
  g.index = 1;
  g.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, last};
  g.type = GidType::kRoceV2;
  g.family = GidFamily::kIpv4;
  e.path.use_grh = true;
  e.path.sgid = g;
  e.gid_table = {g};
  e.qps = {QpEntry{0x100u + last, 0x1000u + last, std::nullopt}};
  return e;
}

struct Warm {
  EndpointInfo a = MadeUp(1), b = MadeUp(2);
  std::optional<EndpointInfo> decoded;
  ConnectionPlan plan;
};

// One step of the warm-up; false after the last.
bool Step(Warm* w, int step) {
  switch (step) {
    case 0: {
      auto decoded = oob::DecodeBinary(oob::EncodeBinary(w->b));
      if (!decoded) return false;
      w->decoded = std::move(*decoded);
      break;
    }
    case 1:
      w->plan = PlanConnection(w->a, *w->decoded);
      break;
    case 2: {
      ValidationInput input;
      input.local = &w->a;
      input.remote = &*w->decoded;
      input.local_plan = w->plan;
      (void)Validate(input);
      break;
    }
    case 3:
      (void)verbs::BuildRtr(Transport::kRc, w->plan.qps[0]);
      (void)verbs::BuildRts(Transport::kRc, w->plan.qps[0]);
      break;
    case 4: {
      Message m;
      m.type = MsgType::kReq;
      m.qp_type = IBV_QPT_RC;
      m.endpoint = oob::EncodeBinary(w->a);
      std::string frame = EncodeFrame(m);
      auto decoded = DecodeBody(std::string_view(frame).substr(4));
      if (!decoded) return false;
      auto part = IdPartOf(*decoded);  // the peer's description from a base
      if (!part) return false;
      EndpointInfo rebuilt = w->a;
      ApplyIdPart(rebuilt, *part);
      break;
    }
    default:
      return false;
  }
  QPCM_DEBUG_LINE("warm-up step " + std::to_string(step) + " done id 0");
  return true;
}

// The same code over this process's own description (RealPass): the port's
// GID table, the joint GID choice and the RoCE rules take paths the made-up
// pair does not. The port seen as its own peer, with two made-up QPs.
void RealPass(const EndpointInfo& port) {
  EndpointInfo local = port, remote = port;
  IdPart part;
  part.qpn = 0x101;
  part.psn = 0x1001;
  ApplyIdPart(local, part);
  part.qpn = 0x102;
  ApplyIdPart(remote, part);
  auto decoded = oob::DecodeBinary(oob::EncodeBinary(remote));
  if (!decoded) return;
  (void)ApplyGidPair(local, *decoded, {});
  ConnectionPlan plan = PlanConnection(local, *decoded, PlanOptions{});
  ValidationInput input;
  input.local = &local;
  input.remote = &*decoded;
  input.local_plan = plan;
  (void)Validate(input);
  if (!plan.qps.empty()) {
    (void)verbs::BuildRtr(Transport::kRc, plan.qps[0]);
    (void)verbs::BuildRts(Transport::kRc, plan.qps[0]);
  }
  QPCM_DEBUG_LINE("warm-up on this port's description done id 0");
}

std::atomic<bool> stop{false};
std::mutex real_mu;
std::condition_variable real_cv;
std::optional<EndpointInfo> real;  // the first port described, for RealPass
bool real_offered = false;         // once per process
std::thread* worker = nullptr;     // never freed: joined at exit
pid_t worker_pid = 0;

// At exit, before the static objects the warm-up uses are destroyed (this
// handler was registered after they were made): stop after the current
// step and wait for it. A forked child has no such thread to wait for.
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
      {
        Warm w;
        for (int step = 0; !stop && Step(&w, step); ++step) {
        }
      }
      // Then, once a port is described (rdma_resolve_addr, rdma_listen on
      // an address), the same over its description; a process that
      // describes none within the wait has its thread back.
      std::unique_lock<std::mutex> guard(real_mu);
      real_cv.wait_for(guard, kRealWait, [] { return stop.load() || real.has_value(); });
      if (stop || !real) return;
      EndpointInfo port = std::move(*real);
      real.reset();
      guard.unlock();
      RealPass(port);
    });
    std::atexit(JoinAtExit);
  });
}

void WarmUpWith(const EndpointInfo& port) {
  {
    std::lock_guard<std::mutex> guard(real_mu);
    if (real_offered || stop) return;
    real_offered = true;
    real = port;
  }
  real_cv.notify_all();
}

}  // namespace qpconnect::rdmacm
