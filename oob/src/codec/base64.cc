// SPDX-License-Identifier: MIT
#include "codec/base64.h"

#include <array>
#include <cstdint>

namespace qpconnect::oob::internal {
namespace {

constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr char kStandard[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

using Reverse = std::array<int8_t, 256>;

constexpr Reverse MakeReverse(const char* alphabet) {
  Reverse r{};
  for (auto& v : r) v = -1;
  for (int i = 0; i < 64; ++i) r[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return r;
}
constexpr Reverse kUrlReverse = MakeReverse(kUrl);
constexpr Reverse kStandardReverse = MakeReverse(kStandard);

std::string Encode(std::string_view bytes, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  auto at = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(bytes[k])); };
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out += alphabet[(v >> shift) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  const uint32_t v = (at(i) << 16) | (rest == 2 ? at(i + 1) << 8 : 0);
  out += alphabet[(v >> 18) & 63];
  out += alphabet[(v >> 12) & 63];
  if (rest == 2) out += alphabet[(v >> 6) & 63];
  if (pad) out.append(3 - rest, '=');
  return out;
}

std::optional<std::string> Decode(std::string_view text, const Reverse& reverse, size_t* bad_at) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) {
    if (bad_at != nullptr) *bad_at = text.size();
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const int8_t v = reverse[static_cast<uint8_t>(text[i])];
    if (v < 0) {
      if (bad_at != nullptr) *bad_at = i;
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) { return Encode(bytes, kUrl, false); }

std::optional<std::string> Base64UrlDecode(std::string_view text, size_t* bad_at) {
  return Decode(text, kUrlReverse, bad_at);
}

std::string Base64Encode(std::string_view bytes) { return Encode(bytes, kStandard, true); }

std::optional<std::string> Base64DecodeAny(std::string_view text) {
  if (std::optional<std::string> out = Decode(text, kStandardReverse, nullptr)) return out;
  return Decode(text, kUrlReverse, nullptr);
}

}  // namespace qpconnect::oob::internal
