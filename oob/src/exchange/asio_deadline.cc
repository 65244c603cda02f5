// SPDX-License-Identifier: MIT
#include "asio_deadline.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace qpconnect::oob {
namespace {

std::atomic<const std::atomic<bool>*> g_interrupt_flag{nullptr};

}  // namespace

void SetInterruptFlag(const std::atomic<bool>* flag) { g_interrupt_flag.store(flag); }

bool Interrupted() {
  const std::atomic<bool>* flag = g_interrupt_flag.load();
  return flag != nullptr && flag->load();
}

}  // namespace qpconnect::oob

namespace qpconnect::oob::internal {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

// What the resolver thread hands back; shared, since the thread may outlive
// the caller that gave up at its deadline.
struct ResolveState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  error_code ec;
  std::vector<tcp::endpoint> endpoints;
};

}  // namespace

Error AsioError(ErrorCode code, const error_code& ec, std::string operation, std::string detail) {
  Error e;
  e.code = code;
  if (ec.category() == boost::system::system_category() ||
      ec.category() == asio::error::get_system_category()) {
    e.sys_errno = ec.value();
  }
  e.operation = std::move(operation);
  e.detail = std::move(detail);
  if (e.sys_errno == 0) {
    if (!e.detail.empty()) e.detail += ": ";
    e.detail += ec.message();
  }
  return e;
}

std::string EndpointText(const tcp::endpoint& ep) {
  const auto addr = ep.address();
  std::string a = addr.to_string();
  if (addr.is_v6()) a = "[" + a + "]";
  return a + ":" + std::to_string(ep.port());
}

std::string Unbracket(std::string host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

Result<std::vector<tcp::endpoint>> ResolveBefore(const std::string& name, uint16_t port,
                                                 Clock::time_point deadline) {
  const std::string host = Unbracket(name);
  error_code ec;
  const auto addr = asio::ip::make_address(host, ec);
  if (!ec) return std::vector<tcp::endpoint>{tcp::endpoint(addr, port)};

  auto state = std::make_shared<ResolveState>();
  const std::string service = std::to_string(port);
  std::thread([state, host, service] {
    asio::io_context io;
    tcp::resolver resolver(io);
    error_code rec;
    auto results = resolver.resolve(host, service, rec);
    std::vector<tcp::endpoint> eps;
    for (const auto& r : results) eps.push_back(r.endpoint());
    std::lock_guard<std::mutex> lock(state->mu);
    state->ec = rec;
    state->endpoints = std::move(eps);
    state->done = true;
    state->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(state->mu);
  if (!state->cv.wait_until(lock, deadline, [&] { return state->done; })) {
    return Error{ErrorCode::kTimeout, 0, "resolve " + host, "",
                 "the resolver did not answer before the deadline"};
  }
  if (state->ec || state->endpoints.empty()) {
    return Error{ErrorCode::kNotFound, 0, "resolve " + host, "",
                 state->ec ? state->ec.message() : "no address"};
  }
  return state->endpoints;
}

}  // namespace qpconnect::oob::internal
