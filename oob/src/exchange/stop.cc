// SPDX-License-Identifier: MIT
#include "stop.h"

#include <cerrno>
#include <utility>

#include "qpconnect/oob/interrupt.h"

namespace qpconnect::oob::internal {
namespace {

thread_local const StopToken* t_token = nullptr;
thread_local bool t_exempt = false;

}  // namespace

void StopToken::Request(std::string_view reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!requested_.load()) reason_ = std::string(reason);
  }
  requested_.store(true);
}

std::string StopToken::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

WaitScope::WaitScope(const StopToken* token, bool exempt)
    : previous_token_(t_token), previous_exempt_(t_exempt) {
  t_token = token;
  t_exempt = exempt;
}

WaitScope::~WaitScope() {
  t_token = previous_token_;
  t_exempt = previous_exempt_;
}

bool StopRequested() {
  if (t_exempt) return false;
  return (t_token != nullptr && t_token->requested()) || Interrupted();
}

std::optional<std::string> StopCause() {
  if (t_exempt) return std::nullopt;
  if (t_token != nullptr && t_token->requested()) {
    const std::string reason = t_token->reason();
    return "cancelled: " + (reason.empty() ? std::string("Cancel() was called") : reason);
  }
  if (Interrupted()) return std::string("interrupted (the process-wide interrupt flag is set)");
  return std::nullopt;
}

Error AsStopped(Error e) {
  auto cause = StopCause();
  if (!cause) return e;
  e.code = ErrorCode::kIo;
  e.sys_errno = ECANCELED;
  e.attribute.clear();
  e.detail = std::move(*cause);
  return e;
}

}  // namespace qpconnect::oob::internal
