// SPDX-License-Identifier: MIT
// Greeting the peer while the device opens (issue 15): Exchanger::Prepare()
// (a tcp client's connect, hellos and key confirmation) on a thread of its
// own, so that it overlaps Connector::Open() on the caller's thread; the
// exchange that follows then only swaps descriptions.
//
// Thread-safety: one owner thread calls Cancel(), Wait() and ms(); the
// exchanger is used by the greeting thread until Wait() or Cancel() returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "qpconnect/exchanger.h"
#include "qpconnect/result.h"

namespace qpconnect::tools {

class Greeter {
 public:
  // `run` false: no thread; Wait() is Ok at once. `x` must outlive this.
  Greeter(Exchanger* x, bool run, std::chrono::milliseconds timeout);
  // Cancels a greeting still under way ("qp-connect stopped") and joins it.
  ~Greeter();
  Greeter(const Greeter&) = delete;
  Greeter& operator=(const Greeter&) = delete;

  // Ends the greeting and joins the thread; a peer that was reached is told
  // `reason` (by Exchanger::Cancel() mid-wait, by Abort() after a greeting
  // that had ended). A greeting still under way gets up to `grace` to end
  // first: a device that fails to open can fail before the connect to a
  // waiting server completed, which the cancel would then end with nothing
  // sent, leaving the server to wait out its timeout. The exchanger is
  // cancelled for good afterwards.
  void Cancel(std::string_view reason,
              std::chrono::milliseconds grace = std::chrono::milliseconds(1000));

  // Joins the greeting; its result (Ok when it did not run).
  Result<void> Wait();

  // How long the greeting took, once Wait() returned; nullopt when it did
  // not run.
  std::optional<double> ms() const { return ms_; }

 private:
  Exchanger* x_;
  std::mutex mu_;
  std::condition_variable ended_cv_;
  bool ended_ = false;  // the greeting returned (under mu_)
  std::thread thread_;
  Result<void> result_ = Ok();
  std::optional<double> ms_;
  double thread_ms_ = 0;
};

}  // namespace qpconnect::tools
