// SPDX-License-Identifier: MIT
// The C API's errors, names, version and log hook.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "internal.h"
#include "qpconnect/log.h"
#include "qpconnect/version_numbers.h"  // configured by cmake/QpcVersion.cmake

namespace qpconnect::capi {
namespace {

// qpc_status_name() and the header's promise rely on this order.
static_assert(QPC_ERR_INVALID_ARGUMENT == static_cast<int>(ErrorCode::kInvalidArgument) + 1);
static_assert(QPC_ERR_NOT_FOUND == static_cast<int>(ErrorCode::kNotFound) + 1);
static_assert(QPC_ERR_TIMEOUT == static_cast<int>(ErrorCode::kTimeout) + 1);
static_assert(QPC_ERR_PROTOCOL == static_cast<int>(ErrorCode::kProtocol) + 1);
static_assert(QPC_ERR_INCOMPATIBLE == static_cast<int>(ErrorCode::kIncompatible) + 1);
static_assert(QPC_ERR_VERBS == static_cast<int>(ErrorCode::kVerbs) + 1);
static_assert(QPC_ERR_IO == static_cast<int>(ErrorCode::kIo) + 1);
static_assert(QPC_ERR_AUTH == static_cast<int>(ErrorCode::kAuth) + 1);
static_assert(QPC_ERR_TRAFFIC == static_cast<int>(ErrorCode::kTraffic) + 1);

// Handed out when even the error object cannot be allocated; never freed.
qpc_error& OutOfMemoryError() noexcept {
  static qpc_error e{QPC_ERR_NO_MEMORY,
                     Error{ErrorCode::kIo, ENOMEM, "qpconnect", "", "out of memory"},
                     "qpconnect: out of memory (errno 12) [no-memory]"};
  return e;
}

}  // namespace

qpc_status StatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return QPC_ERR_INVALID_ARGUMENT;
    case ErrorCode::kNotFound:
      return QPC_ERR_NOT_FOUND;
    case ErrorCode::kTimeout:
      return QPC_ERR_TIMEOUT;
    case ErrorCode::kProtocol:
      return QPC_ERR_PROTOCOL;
    case ErrorCode::kIncompatible:
      return QPC_ERR_INCOMPATIBLE;
    case ErrorCode::kVerbs:
      return QPC_ERR_VERBS;
    case ErrorCode::kIo:
      return QPC_ERR_IO;
    case ErrorCode::kAuth:
      return QPC_ERR_AUTH;
    case ErrorCode::kTraffic:
      return QPC_ERR_TRAFFIC;
  }
  return QPC_ERR_INTERNAL;
}

qpc_status SetError(qpc_error** error, qpc_status status, Error e) noexcept {
  if (error == nullptr) return status;
  qpc_error_free(*error);
  *error = nullptr;
  try {
    auto* out = new qpc_error;
    out->status = status;
    out->message = e.ToString();
    if (status == QPC_ERR_NO_MEMORY || status == QPC_ERR_INTERNAL) {
      // The C++ code has no such ErrorCode: name the C status instead.
      const std::string tag = std::string("[") + ErrorCodeName(e.code) + "]";
      if (out->message.ends_with(tag)) {
        out->message.replace(out->message.size() - tag.size(), tag.size(),
                             std::string("[") + qpc_status_name(status) + "]");
      }
    }
    out->error = std::move(e);
    *error = out;
  } catch (...) {
    *error = &OutOfMemoryError();
  }
  return status;
}

Error Invalid(const char* function, const char* argument, std::string detail) {
  return Error{ErrorCode::kInvalidArgument, 0, function, argument, std::move(detail)};
}

Result<char*> DupString(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) return ErrnoError(ErrorCode::kIo, ENOMEM, "copy a string for the caller");
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

}  // namespace qpconnect::capi

using qpconnect::capi::StatusOf;

extern "C" {

const char* qpc_version_string(void) { return QPCONNECT_VERSION_STRING; }

const char* qpc_status_name(qpc_status status) {
  switch (status) {
    case QPC_OK:
      return "ok";
    case QPC_ERR_NO_MEMORY:
      return "no-memory";
    case QPC_ERR_INTERNAL:
      return "internal";
    case QPC_ERR_INVALID_ARGUMENT:
    case QPC_ERR_NOT_FOUND:
    case QPC_ERR_TIMEOUT:
    case QPC_ERR_PROTOCOL:
    case QPC_ERR_INCOMPATIBLE:
    case QPC_ERR_VERBS:
    case QPC_ERR_IO:
    case QPC_ERR_AUTH:
    case QPC_ERR_TRAFFIC:
      // The values follow ErrorCode's order, shifted by one.
      return qpconnect::ErrorCodeName(static_cast<qpconnect::ErrorCode>(status - 1));
  }
  return "unknown";
}

qpc_status qpc_error_status(const qpc_error* error) {
  return error == nullptr ? QPC_OK : error->status;
}
const char* qpc_error_message(const qpc_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}
const char* qpc_error_operation(const qpc_error* error) {
  return error == nullptr ? "" : error->error.operation.c_str();
}
const char* qpc_error_attribute(const qpc_error* error) {
  return error == nullptr ? "" : error->error.attribute.c_str();
}
const char* qpc_error_detail(const qpc_error* error) {
  return error == nullptr ? "" : error->error.detail.c_str();
}
int qpc_error_errno(const qpc_error* error) {
  return error == nullptr ? 0 : error->error.sys_errno;
}

void qpc_error_free(qpc_error* error) {
  if (error != &qpconnect::capi::OutOfMemoryError()) delete error;
}

void qpc_string_free(char* s) { std::free(s); }

const char* qpc_log_level_name(qpc_log_level level) {
  switch (level) {
    case QPC_LOG_DEBUG:
    case QPC_LOG_INFO:
    case QPC_LOG_WARNING:
    case QPC_LOG_ERROR:
      return qpconnect::LogLevelName(static_cast<qpconnect::LogLevel>(level));
  }
  return "unknown";
}

void qpc_set_log_handler(qpc_log_fn fn, void* user, qpc_log_level min_level) {
  using qpconnect::LogLevel;
  const LogLevel min = min_level < QPC_LOG_DEBUG || min_level > QPC_LOG_ERROR
                           ? LogLevel::kWarning
                           : static_cast<LogLevel>(min_level);
  try {
    if (fn == nullptr) {
      qpconnect::SetLogHandler({}, min);
      return;
    }
    qpconnect::SetLogHandler(
        [fn, user](LogLevel level, std::string_view message) {
          const std::string text(message);  // NUL-terminated for C
          fn(user, static_cast<qpc_log_level>(level), text.c_str());
        },
        min);
  } catch (...) {
    // Only allocating the handler can throw; the previous handler stays.
  }
}

}  // extern "C"
