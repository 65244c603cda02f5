// base64url (RFC 4648 §5) without padding. Private to src/exchange.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace qpconnect::oob::internal {

std::string Base64UrlEncode(std::string_view bytes);

// nullopt if `text` holds a byte outside [A-Za-z0-9_-] (trailing '=' padding
// is accepted), or its length is impossible (n % 4 == 1); `bad_at` then gets
// the offending offset.
std::optional<std::string> Base64UrlDecode(std::string_view text, size_t* bad_at = nullptr);

// Length of the encoding of `n` bytes.
constexpr size_t Base64UrlLength(size_t n) { return (n / 3) * 4 + (n % 3 == 0 ? 0 : n % 3 + 1); }

}  // namespace qpconnect::oob::internal
