// SPDX-License-Identifier: MIT
// The library's environment for the connection manager (cm_env.h) and cm.h's
// calls over it: the QP side is qp.h's, a link is link.h's Link, the clock
// is steady_clock, timers run on the engine thread.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdlib>

#include "address.h"
#include "cm.h"
#include "cm_flow.h"
#include "qp.h"

namespace qpconnect::rdmacm {
namespace {

class LibraryQp final : public CmQp {
 public:
  Result<void> Describe(Id* id) override QPCM_REQUIRES(library_mutex) { return DescribeSide(id); }
  Result<void> PlanAndValidate(Id* id, bool active, std::vector<Gid> link_ends) override
      QPCM_REQUIRES(library_mutex) {
    return rdmacm::PlanAndValidate(id, active, std::move(link_ends));
  }
  Result<void> Connect(Id* id) override QPCM_REQUIRES(library_mutex) { return QpConnect(id); }
  Result<void> SetEce(Id* id, const Ece& ece) override QPCM_REQUIRES(library_mutex) {
    return SetQpEce(id, ece);
  }
  void ToError(Id* id) override QPCM_REQUIRES(library_mutex) { QpToError(id); }
  ibv_ah_attr PeerAh(const Id* id) override QPCM_REQUIRES(library_mutex) {
    return rdmacm::PeerAh(id);
  }
};

class SteadyClock final : public CmClock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
};

class EngineHost final : public CmHost {
 public:
  std::shared_ptr<CmLink> Dial(const sockaddr* peer, const sockaddr* source,
                               std::chrono::milliseconds timeout) override
      QPCM_REQUIRES(library_mutex) {
    return Link::Dial(peer, source, timeout);
  }

  // One timer, on the engine thread, every 200 ms while a deadline runs.
  void ArmSweep() override {
    static boost::asio::steady_timer* timer = nullptr;  // the engine thread's
    static bool armed = false;                          // under library_mutex
    if (armed) return;
    armed = true;
    boost::asio::post(EngineIo(), [] {
      if (timer == nullptr) timer = new boost::asio::steady_timer(EngineIo());
      timer->expires_after(std::chrono::milliseconds(200));
      timer->async_wait([](const boost::system::error_code&) {
        LibraryLock lock;
        armed = false;
        Sweep(DefaultCmEnv());
      });
    });
  }

  void After(std::chrono::milliseconds delay, std::function<void()> fn) override {
    auto timer = std::make_shared<boost::asio::steady_timer>(EngineIo(), delay);
    timer->async_wait([timer, fn = std::move(fn)](const boost::system::error_code&) { fn(); });
  }

  Result<Placement> Place(const sockaddr* addr) override QPCM_REQUIRES(library_mutex) {
    return PlaceAddress(addr);
  }
};

CmInput InputOf(const LinkFailure& failure) {
  switch (failure.kind) {
    case LinkFailure::kRefused:
      return CmInput::kLinkRefused;
    case LinkFailure::kTimeout:
      return CmInput::kLinkTimedOut;
    case LinkFailure::kProtocol:
      return CmInput::kLinkProtocol;
    case LinkFailure::kClosed:
    case LinkFailure::kError:
      break;
  }
  return CmInput::kLinkDropped;
}

}  // namespace

std::chrono::milliseconds AnswerTimeout() {
  static const std::chrono::milliseconds timeout = [] {
    const char* env = std::getenv("QPCM_TIMEOUT_MS");
    long v = env != nullptr ? std::strtol(env, nullptr, 10) : 0;
    return std::chrono::milliseconds(v > 0 ? v : 10000);
  }();
  return timeout;
}

CmEnv& DefaultCmEnv() {
  // Never freed: the engine thread may still sweep while the process exits.
  static CmEnv* env = new CmEnv{*new LibraryQp, *new SteadyClock, *new EngineHost, AnswerTimeout()};
  return *env;
}

void OnMessage(const std::shared_ptr<Link>& link, const Message& msg) {
  OnMessage(DefaultCmEnv(), link, msg);
}

void OnLinkDown(const std::shared_ptr<Link>& link, const LinkFailure& failure) {
  OnLinkDown(DefaultCmEnv(), link, InputOf(failure), failure.text);
}

int Connect(Id* id, const rdma_conn_param* param) { return Connect(DefaultCmEnv(), id, param); }
int Accept(Id* id, const rdma_conn_param* param) { return Accept(DefaultCmEnv(), id, param); }
int Reject(Id* id, const void* private_data, uint8_t length, uint16_t reason) {
  return Reject(DefaultCmEnv(), id, private_data, length, reason);
}
int Disconnect(Id* id) { return Disconnect(DefaultCmEnv(), id); }
int Establish(Id* id) { return Establish(DefaultCmEnv(), id); }
void Forget(Id* id) { Forget(DefaultCmEnv(), id); }

}  // namespace qpconnect::rdmacm
