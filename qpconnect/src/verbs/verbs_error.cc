// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/verbs_error.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "qpconnect/log.h"

namespace qpconnect::verbs {

Error VerbsError(std::string operation, int rc, std::string detail) {
  int err = rc > 0 ? rc : errno;
  return ErrnoError(ErrorCode::kVerbs, err, std::move(operation), std::move(detail));
}

void LogDestroyFailure(const char* operation, int rc) noexcept {
  int err = rc > 0 ? rc : EIO;
  try {
    Log(LogLevel::kWarning, std::string(operation) + " failed: " + std::strerror(err) + " (errno " +
                                std::to_string(err) + ")");
  } catch (...) {
    // Out of memory while formatting: the warning is lost, the destroy is not retried.
  }
}

}  // namespace qpconnect::verbs
