// SPDX-License-Identifier: MIT
// base64 (RFC 4648), private to oob: the stdio exchanger's lines use the
// url-safe alphabet without padding (§5); Protobuf's JSON mapping writes bytes
// fields with the standard alphabet and padding (§4) and reads either.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace qpconnect::oob::internal {

// url-safe alphabet, no padding.
std::string Base64UrlEncode(std::string_view bytes);

// nullopt if `text` holds a byte outside [A-Za-z0-9_-] (trailing '=' padding
// is accepted), or its length is impossible (n % 4 == 1); `bad_at` then gets
// the offending offset.
std::optional<std::string> Base64UrlDecode(std::string_view text, size_t* bad_at = nullptr);

// Length of the url-safe encoding of `n` bytes.
constexpr size_t Base64UrlLength(size_t n) { return (n / 3) * 4 + (n % 3 == 0 ? 0 : n % 3 + 1); }

// Standard alphabet, '=' padding.
std::string Base64Encode(std::string_view bytes);

// Either alphabet (not mixed), padding optional; nullopt otherwise.
std::optional<std::string> Base64DecodeAny(std::string_view text);

}  // namespace qpconnect::oob::internal
