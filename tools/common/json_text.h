// SPDX-License-Identifier: MIT
// JSON written as text, piece by piece, for documents too large to build as
// a tree (qp-validate --json on a whole job, issue 41). The text is what
// nlohmann's compact dump() writes for the same values, so a document
// written in pieces reads as one built whole (docs/json.md).
//
// Thread-safety: pure functions.
#pragma once

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace qpconnect::tools {

// `s` as a JSON string: quoted, escaped as dump() escapes; bytes that are
// not UTF-8 become U+FFFD.
inline void AppendJsonString(std::string_view s, std::string* out) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      *out += nlohmann::json(std::string(s))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
  }
  out->push_back('"');
  out->append(s);
  out->push_back('"');
}

// An integer in decimal.
template <typename T>
requires std::is_integral_v<T>
void AppendJsonNumber(T v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, end);
}

inline void AppendJsonBool(bool v, std::string* out) { *out += v ? "true" : "false"; }

// The value, or null.
template <typename T>
void AppendJsonOptional(const std::optional<T>& v, std::string* out) {
  if (v) {
    AppendJsonNumber(*v, out);
  } else {
    *out += "null";
  }
}

// `"key":` (the key written as is: the callers' keys need no escape).
inline void AppendJsonKey(std::string_view key, std::string* out) {
  out->push_back('"');
  out->append(key);
  *out += "\":";
}

}  // namespace qpconnect::tools
