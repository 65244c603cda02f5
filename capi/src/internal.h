// SPDX-License-Identifier: MIT
// Private to the C API: the handle structs behind the opaque C types, and the
// boundary every exported function goes through (no exception escapes; a
// failed Result becomes a qpc_status and, if asked for, a qpc_error).
//
// Thread-safety: as the C API (one thread per handle).
#pragma once

#include <chrono>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qpconnect/connector.h"
#include "qpconnect/exchanger.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/qpconnect.h"
#include "qpconnect/result.h"

struct qpc_error {
  qpc_status status = QPC_OK;
  qpconnect::Error error;
  std::string message;  // error.ToString()
};

struct qpc_exchanger {
  std::unique_ptr<qpconnect::Exchanger> impl;
  uint16_t tcp_port = 0;  // TCP only
};

struct qpc_connector {
  std::unique_ptr<qpconnect::Connector> impl;
  // The findings' one-line texts, built when first asked for (the report's
  // findings do not change once the validate phase is over).
  mutable std::vector<std::string> finding_texts;
};

namespace qpconnect::capi {

qpc_status StatusOf(ErrorCode code);

// Stores `status` and `e` in *error (freeing what was there) when `error` is
// not null; returns `status`. Never throws: if the error object cannot be
// allocated, *error becomes a static out-of-memory error.
qpc_status SetError(qpc_error** error, qpc_status status, Error e) noexcept;
inline qpc_status SetError(qpc_error** error, Error e) noexcept {
  const qpc_status status = StatusOf(e.code);
  return SetError(error, status, std::move(e));
}

// kInvalidArgument naming the C function and the argument at fault.
Error Invalid(const char* function, const char* argument, std::string detail);
// The common null check: "`argument` is NULL".
inline Error NullArgument(const char* function, const char* argument) {
  return Invalid(function, argument, std::string(argument) + " is NULL");
}

// Runs `body` (returning Result<void>) at the C boundary: QPC_OK, or the
// error's status with *error set. A C++ exception becomes QPC_ERR_NO_MEMORY
// (std::bad_alloc) or QPC_ERR_INTERNAL.
template <typename Body>
qpc_status Boundary(const char* function, qpc_error** error, Body&& body) noexcept {
  try {
    Result<void> r = body();
    if (r) return QPC_OK;
    return SetError(error, std::move(r).error());
  } catch (const std::bad_alloc&) {
    return SetError(error, QPC_ERR_NO_MEMORY,
                    Error{ErrorCode::kIo, ENOMEM, function, "", "out of memory"});
  } catch (const std::exception& e) {
    return SetError(
        error, QPC_ERR_INTERNAL,
        Error{ErrorCode::kIo, 0, function, "", std::string("internal error: ") + e.what()});
  } catch (...) {
    return SetError(error, QPC_ERR_INTERNAL,
                    Error{ErrorCode::kIo, 0, function, "", "internal error: unknown exception"});
  }
}

// Milliseconds from C (negative: treated as 0).
inline std::chrono::milliseconds Millis(int timeout_ms) {
  return std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
}

// What qpc_exchanger_options asks of any exchanger.
struct ExchangerSettings {
  std::optional<oob::Psk> psk;
  uint32_t max_payload_bytes = oob::kDefaultMaxPayloadBytes;
};
// kInvalidArgument (both PSK forms, an empty key), LoadPsk's errors.
Result<ExchangerSettings> SettingsFrom(const char* function, const qpc_exchanger_options* options);

// Wraps `impl` in a new handle stored in *out. REQUIRES: out != nullptr.
Result<void> Emit(qpc_exchanger** out, std::unique_ptr<Exchanger> impl, uint16_t tcp_port = 0);

// A copy of `s` in memory the caller frees with qpc_string_free().
Result<char*> DupString(const std::string& s);

// The C options as the C++ connector takes them (NULL: the C defaults),
// checked: kInvalidArgument naming `function` and the field at fault. The
// one MTU knob, `mtu`, becomes DescribeOptions::mtu (described as forced,
// which the plan follows). What qpc_connector_open() and
// qpc_connector_adopt() convert; the unit tests adopt fake QPs through it.
Result<verbs::SessionOptions> SessionOptionsFrom(const char* function,
                                                 const qpc_open_options* options);
Result<AdoptOptions> AdoptOptionsFrom(const char* function, const qpc_adopt_options* options);

}  // namespace qpconnect::capi
