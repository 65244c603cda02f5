// SPDX-License-Identifier: MIT
#include "qpconnect/result.h"

#include <cerrno>
#include <cstring>

namespace qpconnect {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid-argument";
    case ErrorCode::kNotFound:
      return "not-found";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kProtocol:
      return "protocol";
    case ErrorCode::kIncompatible:
      return "incompatible";
    case ErrorCode::kVerbs:
      return "verbs";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kAuth:
      return "auth";
    case ErrorCode::kTraffic:
      return "traffic";
  }
  return "unknown";
}

std::string Error::ToString() const {
  std::string s = operation.empty() ? std::string("error") : operation;
  if (!detail.empty()) s += ": " + detail;
  if (!attribute.empty()) s += " [attribute " + attribute + "]";
  if (sys_errno != 0) {
    s += " (errno " + std::to_string(sys_errno) + ": " + std::strerror(sys_errno) + ")";
  }
  s += " [";
  s += ErrorCodeName(code);
  s += "]";
  return s;
}

Error ErrnoError(ErrorCode code, int sys_errno, std::string operation, std::string detail) {
  Error e;
  e.code = code;
  e.sys_errno = sys_errno > 0 ? sys_errno : EIO;
  e.operation = std::move(operation);
  e.detail = std::move(detail);
  return e;
}

}  // namespace qpconnect
