// SPDX-License-Identifier: MIT
#include "preflight.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "exit_codes.h"
#include "report.h"

namespace qpconnect::tools {
namespace {

struct ResolveState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
};

}  // namespace

Result<void> CheckResolves(const std::string& option, const std::string& host, bool passive,
                           std::chrono::milliseconds deadline) {
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  // An address literal needs no resolver (nor a thread to bound it).
  unsigned char literal[sizeof(in6_addr)];
  if (::inet_pton(AF_INET, name.c_str(), literal) == 1 ||
      ::inet_pton(AF_INET6, name.c_str(), literal) == 1) {
    return Ok();
  }
  // On a detached thread, as the tcp exchanger does: a resolver that hangs
  // cannot hold the caller past `deadline`.
  auto state = std::make_shared<ResolveState>();
  std::thread([state, name, passive] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
    if (res != nullptr) ::freeaddrinfo(res);
    std::lock_guard<std::mutex> lock(state->mu);
    state->rc = rc;
    state->done = true;
    state->cv.notify_all();
  }).detach();
  const std::string operation = (passive ? "resolve bind address " : "resolve ") + host;
  std::unique_lock<std::mutex> lock(state->mu);
  if (!state->cv.wait_for(lock, deadline, [&] { return state->done; })) {
    return Error{ErrorCode::kTimeout, 0, operation, option,
                 "the resolver did not answer before the deadline"};
  }
  if (state->rc != 0) {
    return Error{
        ErrorCode::kInvalidArgument, 0, operation, option,
        std::string(::gai_strerror(state->rc)) + " (" + option + " '" + host + "' has no address)"};
  }
  return Ok();
}

std::optional<PreflightFault> Preflight(const ConnectOptions& o) {
  if (o.dump_file) {
    // Before the exchange, so the peer is not left waiting for a side that
    // can only fail later.
    if (auto w = CheckWritable(*o.dump_file); !w) return PreflightFault{"dump", w.error()};
  }
  if (o.oob == OobKind::kTcp && o.client && o.host) {
    auto r = CheckResolves("HOST", *o.host, false, o.timeout);
    if (!r && r.error().code == ErrorCode::kInvalidArgument) {
      return PreflightFault{"exchange", r.error()};
    }
  }
  if (o.oob == OobKind::kTcp && !o.client && !o.bind_address.empty()) {
    auto r = CheckResolves("--bind", o.bind_address, true, o.timeout);
    if (!r && r.error().code == ErrorCode::kInvalidArgument) {
      return PreflightFault{"exchange", r.error()};
    }
  }
  return std::nullopt;
}

int ExitForOpen(Error& e) {
  if (e.operation == "allocate buffers") {
    e.detail +=
        ": more memory than this host gives for --qps x --size (x --rx-depth and the "
        "send slots); lower --size, --qps or --rx-depth";
  }
  return ExitStatus(ExitStage::kOpen, e);
}

}  // namespace qpconnect::tools
