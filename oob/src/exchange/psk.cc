#include "qpconnect/oob/psk.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>

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

}  // namespace

Result<Psk> Psk::FromBytes(std::string_view key) {
  if (key.empty()) {
    Error e;
    e.code = ErrorCode::kInvalidArgument;
    e.operation = "PSK";
    e.detail = "the key is empty";
    return e;
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
  auto psk = Psk::FromBytes(std::string_view(reinterpret_cast<const char*>(buf.data()), got));
  Wipe(buf);
  return psk;
}

Result<Nonce> RandomNonce() {
  Nonce n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1) {
    Error e;
    e.code = ErrorCode::kIo;
    e.operation = "RAND_bytes";
    e.detail = "OpenSSL could not produce a random nonce";
    return e;
  }
  return n;
}

Result<Mac> HmacSha256(const Psk& key, std::initializer_list<std::string_view> parts) {
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
  if (EVP_MAC_init(ctx.get(), key.bytes().data(), key.bytes().size(), params) != 1) {
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

}  // namespace qpconnect::oob
