// SPDX-License-Identifier: MIT
#include "greeter.h"

namespace qpconnect::tools {

Greeter::Greeter(Exchanger* x, bool run, std::chrono::milliseconds timeout) : x_(x) {
  if (!run) return;
  thread_ = std::thread([this, timeout] {
    const auto start = std::chrono::steady_clock::now();
    result_ = x_->Prepare(timeout);
    thread_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    ended_cv_.notify_all();
  });
}

Greeter::~Greeter() {
  if (thread_.joinable()) Cancel("qp-connect stopped", std::chrono::milliseconds(0));
}

void Greeter::Cancel(std::string_view reason, std::chrono::milliseconds grace) {
  if (!thread_.joinable()) return;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ended_cv_.wait_for(lock, grace, [this] { return ended_; });
  }
  x_->Cancel(reason);
  thread_.join();
  // A greeting that had already ended well waited for nothing the cancel
  // could end (which is when it sends its abort): the greeted peer is told
  // here.
  if (result_) x_->Abort(reason, std::chrono::milliseconds(2000));
}

Result<void> Greeter::Wait() {
  if (thread_.joinable()) {
    thread_.join();
    ms_ = thread_ms_;
  }
  return result_;
}

}  // namespace qpconnect::tools
