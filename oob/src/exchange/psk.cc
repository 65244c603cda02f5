// SPDX-License-Identifier: MIT
#include "qpconnect/oob/psk.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <memory>

#include "qpconnect/log.h"

namespace qpconnect::oob {
namespace {

void Wipe(std::vector<unsigned char>& v) {
  if (!v.empty()) OPENSSL_cleanse(v.data(), v.size());
}

Error PskError(ErrorCode code, const std::string& path, std::string detail) {
  Error e;
  e.code = code;
  e.operation = "load PSK file " + path;
  e.detail = std::move(detail);
  return e;
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

struct MacDeleter {
  void operator()(EVP_MAC* m) const noexcept { EVP_MAC_free(m); }
};
struct MacCtxDeleter {
  void operator()(EVP_MAC_CTX* c) const noexcept { EVP_MAC_CTX_free(c); }
};
struct KdfDeleter {
  void operator()(EVP_KDF* k) const noexcept { EVP_KDF_free(k); }
};
struct KdfCtxDeleter {
  void operator()(EVP_KDF_CTX* c) const noexcept { EVP_KDF_CTX_free(c); }
};
struct CipherCtxDeleter {
  void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
};

Error CryptoError(const char* operation, const char* what) {
  Error e;
  e.code = ErrorCode::kIo;
  e.operation = operation;
  e.detail = std::string("libcrypto: ") + what + " failed";
  return e;
}

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

Result<Psk> Psk::FromBytes(std::string_view key) {
  if (key.empty()) {
    Error e;
    e.code = ErrorCode::kInvalidArgument;
    e.operation = "PSK";
    e.detail = "the key is empty";
    return e;
  }
  if (key.size() < kMinPskBytes) {
    Log(LogLevel::kWarning, "the pre-shared key is " + std::to_string(key.size()) +
                                " bytes long, shorter than " + std::to_string(kMinPskBytes) +
                                ": a peer without it can test guesses offline; use 32 random "
                                "bytes (qp-connect --gen-psk FILE)");
  }
  Psk psk;
  psk.key_.assign(key.begin(), key.end());
  return psk;
}

Psk& Psk::operator=(const Psk& other) {
  if (this != &other) {
    Wipe(key_);
    key_ = other.key_;
  }
  return *this;
}

Psk::Psk(Psk&& other) noexcept : key_(std::move(other.key_)) { other.key_.clear(); }

Psk& Psk::operator=(Psk&& other) noexcept {
  if (this != &other) {
    Wipe(key_);
    key_ = std::move(other.key_);
    other.key_.clear();
  }
  return *this;
}

Psk::~Psk() { Wipe(key_); }

Result<Psk> LoadPsk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    return ErrnoError(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, err,
                      "load PSK file " + path, "cannot open");
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoError(ErrorCode::kIo, errno, "load PSK file " + path);
  if (!S_ISREG(st.st_mode)) {
    return PskError(ErrorCode::kInvalidArgument, path, "not a regular file");
  }
  const auto perms = st.st_mode & 07777;
  if ((perms & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(perms));
    return PskError(ErrorCode::kInvalidArgument, path,
                    std::string("file mode ") + mode +
                        " lets group or others read or write the key; run chmod 600 on it");
  }
  if (st.st_size > static_cast<off_t>(kMaxPskFileBytes)) {
    return PskError(ErrorCode::kInvalidArgument, path,
                    "file is " + std::to_string(st.st_size) + " bytes; a key file holds at most " +
                        std::to_string(kMaxPskFileBytes));
  }
  std::vector<unsigned char> buf(kMaxPskFileBytes + 1);
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      Wipe(buf);
      return ErrnoError(ErrorCode::kIo, err, "load PSK file " + path, "read failed");
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxPskFileBytes) {
    Wipe(buf);
    return PskError(ErrorCode::kInvalidArgument, path,
                    "file grew beyond " + std::to_string(kMaxPskFileBytes) + " bytes while read");
  }
  auto is_space = [](unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (got > 0 && is_space(buf[got - 1])) --got;
  if (got == 0) {
    Wipe(buf);
    return PskError(ErrorCode::kInvalidArgument, path,
                    "the key is empty (the file holds no bytes, or only whitespace)");
  }
  if (got < kMinPskBytes) {
    Wipe(buf);
    return PskError(ErrorCode::kInvalidArgument, path,
                    "the key is " + std::to_string(got) + " bytes long; a key needs at least " +
                        std::to_string(kMinPskBytes) +
                        " (a short key can be guessed offline): create one with qp-connect "
                        "--gen-psk FILE, or openssl rand -hex 32 > FILE");
  }
  auto psk = Psk::FromBytes(std::string_view(reinterpret_cast<const char*>(buf.data()), got));
  Wipe(buf);
  return psk;
}

Result<void> GeneratePskFile(const std::string& path) {
  std::array<unsigned char, kGeneratedPskBytes> key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
    return PskError(ErrorCode::kIo, path, "OpenSSL could not produce random bytes");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : key) {
    text += kHex[b >> 4];
    text += kHex[b & 0xf];
  }
  text += '\n';
  WipeSecret(key.data(), key.size());
  const std::string op = "write PSK file " + path;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    const int err = errno;
    WipeSecret(text.data(), text.size());
    if (err == EEXIST) {
      return ErrnoError(ErrorCode::kInvalidArgument, err, op,
                        "the file exists; refusing to overwrite a key (remove it first)");
    }
    return ErrnoError(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, err, op);
  }
  FdCloser closer{fd};
  auto fail = [&](const char* what) {
    const int err = errno;
    WipeSecret(text.data(), text.size());
    ::unlink(path.c_str());
    return ErrnoError(ErrorCode::kIo, err, op, what);
  };
  if (::fchmod(fd, 0600) != 0) return fail("fchmod 0600 failed");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write failed");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("fsync failed");
  WipeSecret(text.data(), text.size());
  return Ok();
}

Result<Nonce> RandomNonce() {
  // The kernel's CSPRNG directly: OpenSSL's first RAND_bytes() initialises
  // its DRBG and configuration, which cost 64-92 ms per process in the lab
  // (TCG), on every exchange without a key (issue 15, docs/performance.md).
  Nonce n{};
  size_t done = 0;
  while (done < n.size()) {
    const ssize_t got = ::getrandom(n.data() + done, n.size() - done, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      Error e;
      e.code = ErrorCode::kIo;
      e.sys_errno = errno;
      e.operation = "getrandom";
      e.detail = "the kernel could not produce a random nonce";
      return e;
    }
    done += static_cast<size_t>(got);
  }
  return n;
}

Result<Mac> HmacSha256(const Psk& key, std::initializer_list<std::string_view> parts) {
  return HmacSha256(
      std::string_view(reinterpret_cast<const char*>(key.bytes().data()), key.bytes().size()),
      parts);
}

Result<Mac> HmacSha256(std::string_view key, std::initializer_list<std::string_view> parts) {
  auto fail = [](const char* what) {
    Error e;
    e.code = ErrorCode::kIo;
    e.operation = "HMAC-SHA256";
    e.detail = std::string("libcrypto: ") + what + " failed";
    return e;
  };
  std::unique_ptr<EVP_MAC, MacDeleter> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) return fail("EVP_MAC_fetch(HMAC)");
  std::unique_ptr<EVP_MAC_CTX, MacCtxDeleter> ctx(EVP_MAC_CTX_new(mac.get()));
  if (!ctx) return fail("EVP_MAC_CTX_new");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  if (EVP_MAC_init(ctx.get(), Bytes(key), key.size(), params) != 1) {
    return fail("EVP_MAC_init");
  }
  for (std::string_view part : parts) {
    if (part.empty()) continue;
    if (EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(part.data()),
                       part.size()) != 1) {
      return fail("EVP_MAC_update");
    }
  }
  Mac out{};
  size_t out_len = 0;
  if (EVP_MAC_final(ctx.get(), out.data(), &out_len, out.size()) != 1 || out_len != out.size()) {
    return fail("EVP_MAC_final");
  }
  return out;
}

bool MacEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Result<SecretKey> HkdfSha256(std::string_view ikm, std::string_view salt, std::string_view info) {
  constexpr const char* kOp = "HKDF-SHA256";
  std::unique_ptr<EVP_KDF, KdfDeleter> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  if (!kdf) return CryptoError(kOp, "EVP_KDF_fetch(HKDF)");
  std::unique_ptr<EVP_KDF_CTX, KdfCtxDeleter> ctx(EVP_KDF_CTX_new(kdf.get()));
  if (!ctx) return CryptoError(kOp, "EVP_KDF_CTX_new");
  char digest[] = "SHA256";
  // OSSL_PARAM wants non-const pointers; the KDF only reads them.
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(ikm.data()),
                                        ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()),
                                        salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()),
                                        info.size()),
      OSSL_PARAM_construct_end(),
  };
  SecretKey out{};
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    return CryptoError(kOp, "EVP_KDF_derive");
  }
  return out;
}

namespace {

// One AES-256-GCM pass over `in` into `out` (as many bytes) with `aad`:
// encrypting writes the tag to `tag`; decrypting checks `tag` and yields
// false when it does not verify. kIo if libcrypto fails.
Result<bool> GcmPass(bool encrypt, const SecretKey& key, const AeadIv& iv, std::string_view aad,
                     std::string_view in, unsigned char* out, unsigned char* tag, const char* op) {
  std::unique_ptr<EVP_CIPHER_CTX, CipherCtxDeleter> ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return CryptoError(op, "EVP_CIPHER_CTX_new");
  if (EVP_CipherInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key.data(), iv.data(),
                        encrypt ? 1 : 0) != 1) {
    return CryptoError(op, "EVP_CipherInit_ex");
  }
  int n = 0;
  if (!aad.empty() &&
      EVP_CipherUpdate(ctx.get(), nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) != 1) {
    return CryptoError(op, "EVP_CipherUpdate(aad)");
  }
  size_t done = 0;
  // EVP lengths are int: feed large descriptions in slices.
  constexpr size_t kSlice = 1u << 30;
  while (done < in.size()) {
    const size_t len = std::min(kSlice, in.size() - done);
    if (EVP_CipherUpdate(ctx.get(), out + done, &n, Bytes(in) + done, static_cast<int>(len)) != 1) {
      return CryptoError(op, "EVP_CipherUpdate");
    }
    done += static_cast<size_t>(n);
  }
  if (!encrypt && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG,
                                      static_cast<int>(kAeadTagBytes), tag) != 1) {
    return CryptoError(op, "EVP_CTRL_GCM_SET_TAG");
  }
  if (EVP_CipherFinal_ex(ctx.get(), out + done, &n) != 1) {
    if (!encrypt) return false;  // the tag does not verify
    return CryptoError(op, "EVP_CipherFinal_ex");
  }
  if (encrypt && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG,
                                     static_cast<int>(kAeadTagBytes), tag) != 1) {
    return CryptoError(op, "EVP_CTRL_GCM_GET_TAG");
  }
  return true;
}

}  // namespace

Result<std::string> AeadSeal(const SecretKey& key, const AeadIv& iv, std::string_view aad,
                             std::string_view plaintext) {
  std::string out(plaintext.size() + kAeadTagBytes, '\0');
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  auto ok = GcmPass(true, key, iv, aad, plaintext, dst, dst + plaintext.size(), "AES-256-GCM seal");
  if (!ok) return std::move(ok).error();
  return out;
}

Result<std::string> AeadOpen(const SecretKey& key, const AeadIv& iv, std::string_view aad,
                             std::string_view sealed) {
  Error refused;
  refused.code = ErrorCode::kAuth;
  refused.operation = "AES-256-GCM open";
  if (sealed.size() < kAeadTagBytes) {
    refused.detail = "shorter than its " + std::to_string(kAeadTagBytes) + "-byte tag";
    return refused;
  }
  const std::string_view ciphertext = sealed.substr(0, sealed.size() - kAeadTagBytes);
  std::string tag(sealed.substr(ciphertext.size()));
  std::string out(ciphertext.size(), '\0');
  auto ok = GcmPass(false, key, iv, aad, ciphertext, reinterpret_cast<unsigned char*>(out.data()),
                    reinterpret_cast<unsigned char*>(tag.data()), "AES-256-GCM open");
  if (!ok) return std::move(ok).error();
  if (!*ok) {
    WipeSecret(out.data(), out.size());
    refused.detail = "the authentication tag does not verify";
    return refused;
  }
  return out;
}

void WipeSecret(void* data, size_t size) {
  if (data != nullptr && size > 0) OPENSSL_cleanse(data, size);
}

}  // namespace qpconnect::oob
