// SPDX-License-Identifier: MIT
// Stopping a wait early: the one mechanism behind Exchanger::Cancel() (one
// exchanger, from any thread) and the process-wide interrupt flag
// (interrupt.h, qp-connect --serve's signals). Private to oob/src.
//
// Each driver-based exchanger owns a StopToken. While one of its calls runs,
// a WaitScope makes that token the calling thread's current one, and every
// wait underneath (the Asio loop RunUntil(), a caller channel's receive in
// slices, the file exchanger's directory wait) asks StopRequested() at least
// every kInterruptPoll. A stopped wait ends as its deadline would; the driver
// then reports StoppedError() (kIo, errno ECANCELED) instead of kTimeout.
//
// Thread-safety: StopToken::Request() and requested() from any thread at
// any time; the rest on the thread that runs the exchanger's call.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/oob/interrupt.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

class StopToken {
 public:
  // Final: once requested, a token stays requested. The first reason wins.
  void Request(std::string_view reason);
  bool requested() const { return requested_.load(); }
  // The reason given to Request(); empty before.
  std::string reason() const;

 private:
  std::atomic<bool> requested_{false};
  mutable std::mutex mu_;
  std::string reason_;
};

// Makes `token` the calling thread's current token for its lifetime (the
// previous one is restored after). `exempt`: the waits inside ignore every
// stop, the process-wide flag too (an abort sent after a stop, itself bounded
// by its own deadline).
class WaitScope {
 public:
  explicit WaitScope(const StopToken* token, bool exempt = false);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  const StopToken* previous_token_;
  bool previous_exempt_;
};

// True when the calling thread's waits should end now: outside an exempt
// scope, the process-wide flag is set (interrupt.h) or the current token was
// requested.
bool StopRequested();

// What stopped the waits: "cancelled: <reason>" (the current token) or
// "interrupted (...)" (the process-wide flag); nullopt when nothing did.
std::optional<std::string> StopCause();

// `e` (a wait that ended early, usually kTimeout) as the stop it was: kIo
// with errno ECANCELED, its operation kept, detail StopCause(). `e` unchanged
// when nothing stopped the waits.
Error AsStopped(Error e);

}  // namespace qpconnect::oob::internal
