// Pre-shared keys, nonces and HMAC-SHA256: the exchangers' integrity check.
//
// With a PSK configured on both sides, each side first sends a fresh random
// nonce (a hello frame); every later message carries a binding (sender nonce,
// receiver nonce, sequence number) and an HMAC-SHA256 trailer over
// "qpconnect-oob-v1" || direction label || frame header || payload. A peer
// without the key, a message replayed from an earlier session (its nonces
// differ) or replayed within one (its sequence number differs), and a tampered
// message are refused with kAuth. docs/oob.md describes the scheme.
//
// The PSK gives integrity and authenticity, not secrecy: descriptions travel
// in clear.
//
// Thread-safety: Psk is an immutable value; the functions are thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/result.h"

namespace qpconnect::oob {

inline constexpr size_t kNonceBytes = 16;
inline constexpr size_t kMacBytes = 32;
// Largest key file LoadPsk reads.
inline constexpr size_t kMaxPskFileBytes = 64 * 1024;

using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

// A pre-shared key. Its bytes are wiped when the value is destroyed.
class Psk {
 public:
  // The key is `key` as given (no trimming). kInvalidArgument if it is empty.
  static Result<Psk> FromBytes(std::string_view key);

  Psk(const Psk&) = default;
  Psk& operator=(const Psk&);
  Psk(Psk&& other) noexcept;
  Psk& operator=(Psk&& other) noexcept;
  ~Psk();

  const std::vector<unsigned char>& bytes() const { return key_; }

 private:
  Psk() = default;
  std::vector<unsigned char> key_;
};

// Reads a key file. The key is the file's bytes with trailing ASCII whitespace
// (a final newline, "\r\n") removed, so `openssl rand -hex 32 > key` works on
// both sides. Errors:
//   kNotFound         no such file
//   kInvalidArgument  not a regular file; readable or writable by group or
//                     others (chmod 600); empty (or only whitespace); larger
//                     than kMaxPskFileBytes
//   kIo               open or read failed
Result<Psk> LoadPsk(const std::string& path);

// 16 bytes from OpenSSL's CSPRNG. kIo if RAND_bytes fails.
Result<Nonce> RandomNonce();

// HMAC-SHA256 of the concatenation of `parts` under `key`. kIo if libcrypto
// fails (no SHA-256 provider).
Result<Mac> HmacSha256(const Psk& key, std::initializer_list<std::string_view> parts);

// Constant-time comparison (CRYPTO_memcmp); false when the sizes differ.
bool MacEqual(std::string_view a, std::string_view b);

}  // namespace qpconnect::oob
