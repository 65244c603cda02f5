#include "qpconnect/verbs/verbs_error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace qpconnect::verbs {

Error VerbsError(std::string operation, int rc, std::string detail) {
  int err = rc > 0 ? rc : errno;
  return ErrnoError(ErrorCode::kVerbs, err, std::move(operation), std::move(detail));
}

void LogDestroyFailure(const char* operation, int rc) noexcept {
  std::fprintf(stderr, "qpconnect: warning: %s failed: %s (errno %d)\n", operation,
               std::strerror(rc > 0 ? rc : EIO), rc > 0 ? rc : EIO);
}

}  // namespace qpconnect::verbs
