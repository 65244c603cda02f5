// SPDX-License-Identifier: MIT
// Pre-shared keys and the standard primitives the exchangers compose with
// them: random nonces, HKDF-SHA256, HMAC-SHA256 and AES-256-GCM (OpenSSL's
// EVP interface).
//
// With a PSK configured on both sides, each side first sends a fresh random
// nonce (a hello frame). Both derive per-direction keys from the PSK and the
// two nonces (HKDF), then prove to each other that they hold the key (a
// confirm frame: HMAC over both nonces and the roles) before either sends its
// description. Descriptions, barriers and aborts then travel encrypted and
// authenticated (AES-256-GCM) and bound to the session (sender nonce, receiver
// nonce, sequence number). A peer without the key learns our nonce and our
// confirmation tag, nothing about the description; replayed, reflected,
// reordered and tampered messages are refused with kAuth. docs/oob.md
// describes the scheme.
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
// Shortest key LoadPsk accepts (Psk::FromBytes warns below it): a confirmation
// tag a keyless peer obtains lets it test guesses of the key offline, so the
// key must be too long to guess. GeneratePskFile writes 32 random bytes.
inline constexpr size_t kMinPskBytes = 16;
inline constexpr size_t kGeneratedPskBytes = 32;

inline constexpr size_t kAeadKeyBytes = 32;  // AES-256
inline constexpr size_t kAeadIvBytes = 12;   // GCM's 96-bit IV
inline constexpr size_t kAeadTagBytes = 16;

using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;
using SecretKey = std::array<uint8_t, kAeadKeyBytes>;
using AeadIv = std::array<uint8_t, kAeadIvBytes>;

// A pre-shared key. Its bytes are wiped when the value is destroyed.
class Psk {
 public:
  // The key is `key` as given (no trimming). kInvalidArgument if it is empty.
  // A key shorter than kMinPskBytes is accepted (programs may have their own
  // reasons) with a warning through the log hook (qpconnect/log.h).
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
//                     others (chmod 600); empty (or only whitespace); shorter
//                     than kMinPskBytes; larger than kMaxPskFileBytes
//   kIo               open or read failed
Result<Psk> LoadPsk(const std::string& path);

// Writes a fresh key to a new file `path`: kGeneratedPskBytes bytes from
// RAND_bytes as lowercase hex digits and a newline (what `openssl rand -hex 32`
// prints; LoadPsk reads the 64 digits as the key), created with mode 0600
// whatever the umask, fsynced. Never overwrites. Errors: kInvalidArgument
// (`path` exists), kNotFound (its directory does not), kIo.
Result<void> GeneratePskFile(const std::string& path);

// 16 bytes from the kernel CSPRNG (getrandom(2)). kIo if it fails.
Result<Nonce> RandomNonce();

// HMAC-SHA256 of the concatenation of `parts` under `key`. kIo if libcrypto
// fails (no SHA-256 provider).
Result<Mac> HmacSha256(const Psk& key, std::initializer_list<std::string_view> parts);
Result<Mac> HmacSha256(std::string_view key, std::initializer_list<std::string_view> parts);

// HKDF-SHA256 (RFC 5869, extract then expand) of `ikm` with `salt` and
// `info`: a 32-byte key. kIo if libcrypto fails.
Result<SecretKey> HkdfSha256(std::string_view ikm, std::string_view salt, std::string_view info);

// AES-256-GCM. AeadSeal returns the ciphertext (as long as `plaintext`)
// followed by the 16-byte tag over `aad` and the ciphertext. REQUIRES: an
// (key, iv) pair is used for one message only. kIo if libcrypto fails.
Result<std::string> AeadSeal(const SecretKey& key, const AeadIv& iv, std::string_view aad,
                             std::string_view plaintext);
// The plaintext of `sealed` (ciphertext || tag). kAuth when the tag does not
// verify (another key, altered ciphertext or aad); kIo if libcrypto fails.
Result<std::string> AeadOpen(const SecretKey& key, const AeadIv& iv, std::string_view aad,
                             std::string_view sealed);

// Overwrites `size` bytes at `data` with zeros in a way the compiler keeps
// (OPENSSL_cleanse), for key material.
void WipeSecret(void* data, size_t size);

// Constant-time comparison (CRYPTO_memcmp); false when the sizes differ.
bool MacEqual(std::string_view a, std::string_view b);

}  // namespace qpconnect::oob
