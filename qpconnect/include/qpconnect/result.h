// SPDX-License-Identifier: MIT
// Result<T> and Error: the error convention of every fallible qpconnect call.
//
// Result<T> mirrors the subset of std::expected<T, Error> that the project uses
// (has_value, value, error, operator bool, operator*, operator->), so it can
// become an alias of std::expected when the toolchain moves to C++23. No
// exception crosses the library API.
//
// Error keeps what a user needs to act: the kind of failure, the errno of the
// OS or verbs call that failed, the operation ("ibv_modify_qp INIT->RTR",
// "connect 10.0.0.7:18515"), the attribute at fault ("path_mtu", or a decoded
// mask) and free-text detail.
//
// Thread-safety: plain values; no shared state.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace qpconnect {

enum class ErrorCode {
  kInvalidArgument,  // a caller or user supplied a value that cannot be used
  kNotFound,         // a device, port, GID, file or peer does not exist
  kTimeout,          // a deadline passed
  kProtocol,         // a peer message failed to decode or broke the protocol
  kIncompatible,     // both sides are well-formed but cannot be connected
  kVerbs,            // a libibverbs call failed
  kIo,               // an OS I/O call failed
  kAuth,             // integrity check failed (PSK/HMAC, replay)
  kTraffic,          // a work completion failed or data did not match
};

// Stable lower-case name of `code` ("invalid-argument", "timeout", ...).
const char* ErrorCodeName(ErrorCode code);

struct Error {
  // Error{code, errno, operation, attribute, detail}, each part optional
  // after the code; the structured places below are set by name.
  Error() = default;
  Error(ErrorCode code_in, int sys_errno_in = 0, std::string operation_in = {},  // NOLINT
        std::string attribute_in = {}, std::string detail_in = {})
      : code(code_in),
        sys_errno(sys_errno_in),
        operation(std::move(operation_in)),
        attribute(std::move(attribute_in)),
        detail(std::move(detail_in)) {}

  ErrorCode code = ErrorCode::kInvalidArgument;
  int sys_errno = 0;      // errno value; 0 when no OS or verbs call failed
  std::string operation;  // what was being done
  std::string attribute;  // attribute or mask at fault; empty if n/a
  std::string detail;     // anything else a human needs
  // Where in a repeated operation it failed, when it has such a place: the QP
  // (its index in the connector's list) and the traffic iteration. Set by the
  // code that chooses the error, so callers need not parse `operation`.
  std::optional<uint32_t> qp_index;
  std::optional<uint32_t> iteration;

  // "<operation>: <detail> [attribute=<attribute>] (errno N: strerror) [code]"
  std::string ToString() const;
};

// Builds an Error from an errno value; `sys_errno` <= 0 becomes EIO so that a
// failed call never reports "success".
Error ErrnoError(ErrorCode code, int sys_errno, std::string operation, std::string detail = {});

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  // REQUIRES: has_value().
  T& value() & { return Get(); }
  const T& value() const& { return Get(); }
  T&& value() && { return std::move(Get()); }
  T& operator*() & { return Get(); }
  const T& operator*() const& { return Get(); }
  T* operator->() { return &Get(); }
  const T* operator->() const { return &Get(); }

  // REQUIRES: !has_value().
  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(v_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::move(std::get<1>(v_));
  }

 private:
  T& Get() {
    assert(has_value());
    return std::get<0>(v_);
  }
  const T& Get() const {
    assert(has_value());
    return std::get<0>(v_);
  }
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const { assert(ok_); }

  // REQUIRES: !has_value().
  const Error& error() const& {
    assert(!ok_);
    return error_;
  }
  Error&& error() && {
    assert(!ok_);
    return std::move(error_);
  }

 private:
  Error error_;
  bool ok_ = true;
};

inline Result<void> Ok() { return {}; }

}  // namespace qpconnect

// Propagates the error of a Result-returning expression.
#define QPC_TRY(expr)                                                \
  do {                                                               \
    auto qpc_try_result_ = (expr);                                   \
    if (!qpc_try_result_) return std::move(qpc_try_result_).error(); \
  } while (0)
