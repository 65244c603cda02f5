// SPDX-License-Identifier: MIT
// qp-connect's Greeter (greeter.h): a device that fails to open while the
// greeting is still under way gives the greeting its grace, so a server it
// was about to reach is told why (Abort) instead of waiting out its timeout;
// a greeting that does not end within the grace is cancelled.
#include "greeter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace qpconnect::tools {
namespace {

using std::chrono::milliseconds;

// Prepare() succeeds after `prepare_ms`, or, with `block`, only ends when
// cancelled (then fails). Records Cancel and Abort.
class SlowGreeting : public Exchanger {
 public:
  SlowGreeting(int prepare_ms, bool block) : prepare_ms_(prepare_ms), block_(block) {}
  Result<EndpointInfo> Exchange(const EndpointInfo&, milliseconds) override {
    return Error{ErrorCode::kInvalidArgument, 0, "exchange", "", "not used"};
  }
  Result<void> Barrier(std::string_view, milliseconds) override { return Ok(); }
  Result<void> Prepare(milliseconds) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (block_) {
      cv_.wait(lock, [this] { return cancelled_; });
      return Error{ErrorCode::kTimeout, 0, "prepare", "", "cancelled"};
    }
    cv_.wait_for(lock, milliseconds(prepare_ms_), [this] { return cancelled_; });
    if (cancelled_) return Error{ErrorCode::kTimeout, 0, "prepare", "", "cancelled"};
    return Ok();
  }
  void Cancel(std::string_view) override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  void Abort(std::string_view reason, milliseconds) override { aborted_with = std::string(reason); }
  std::string aborted_with;

 private:
  int prepare_ms_;
  bool block_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool cancelled_ = false;
};

TEST(QpConnectGreeter, AGreetingThatEndsWithinTheGraceTellsThePeer) {
  SlowGreeting x(50, false);
  Greeter g(&x, true, milliseconds(5000));
  g.Cancel("the client could not open its device", milliseconds(2000));
  EXPECT_EQ(x.aborted_with, "the client could not open its device");
}

TEST(QpConnectGreeter, AGreetingPastTheGraceIsCancelled) {
  SlowGreeting x(0, true);
  Greeter g(&x, true, milliseconds(5000));
  const auto t0 = std::chrono::steady_clock::now();
  g.Cancel("stop", milliseconds(100));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(x.aborted_with.empty());  // never reached: nothing to tell
  EXPECT_LT(took, milliseconds(5000));  // the cancel ended it, not its timeout
}

TEST(QpConnectGreeter, NoGraceCancelsAtOnce) {
  SlowGreeting x(3000, false);
  Greeter g(&x, true, milliseconds(5000));
  g.Cancel("stop", milliseconds(0));
  EXPECT_TRUE(x.aborted_with.empty());
}

}  // namespace
}  // namespace qpconnect::tools
