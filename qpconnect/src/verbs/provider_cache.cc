// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/provider_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>

#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/provider.h"

namespace qpconnect::verbs {
namespace {

constexpr size_t kMaxFileBytes = 64 * 1024;
constexpr size_t kMaxDeviceName = 64;  // libibverbs' IBV_SYSFS_NAME_MAX

bool IsDeviceName(std::string_view s) {
  if (s.empty() || s.size() >= kMaxDeviceName) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool IsLibraryPath(std::string_view s) {
  if (s.size() < 2 || s.size() > 4096 || s[0] != '/') return false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

Error IoError(int err, std::string operation) {
  return Error{ErrorCode::kIo, err, std::move(operation), "", "provider cache not written"};
}

// mkdir -p of the directory part of `path`, each new level mode 0700.
Result<void> MakeParents(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return IoError(errno, "mkdir " + dir);
  }
  return Ok();
}

}  // namespace

std::vector<ProviderCacheEntry> ParseProviderCache(std::string_view text) {
  std::vector<ProviderCacheEntry> entries;
  while (!text.empty() && entries.size() < kMaxProviderCacheEntries) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view device = line.substr(0, space);
    const std::string_view library = line.substr(space + 1);
    if (!IsDeviceName(device) || !IsLibraryPath(library)) continue;
    bool seen = false;
    for (const auto& e : entries) seen = seen || e.device == device;
    if (!seen) entries.push_back({std::string(device), std::string(library)});
  }
  return entries;
}

std::string FormatProviderCache(const std::vector<ProviderCacheEntry>& entries) {
  std::string text =
      "# qpconnect: the libibverbs provider library of each RDMA device opened here, loaded "
      "first to start faster (safe to delete)\n";
  for (const auto& e : entries) text += e.device + " " + e.library + "\n";
  return text;
}

std::vector<std::string> CachedLibraries(const std::vector<ProviderCacheEntry>& entries) {
  std::vector<std::string> libraries;
  for (const auto& e : entries) {
    bool seen = false;
    for (const auto& l : libraries) seen = seen || l == e.library;
    if (!seen) libraries.push_back(e.library);
  }
  return libraries;
}

bool RememberProvider(std::vector<ProviderCacheEntry>& entries, const std::string& device,
                      const std::string& library) {
  if (!IsDeviceName(device) || !IsLibraryPath(library)) return false;
  for (auto& e : entries) {
    if (e.device != device) continue;
    if (e.library == library) return false;
    e.library = library;
    return true;
  }
  if (entries.size() >= kMaxProviderCacheEntries) return false;
  entries.push_back({device, library});
  return true;
}

std::vector<ProviderCacheEntry> ReadProviderCache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  std::string text;
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
      static_cast<size_t>(st.st_size) <= kMaxFileBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  close(fd);
  return ParseProviderCache(text);
}

Result<void> WriteProviderCache(const std::string& path,
                                const std::vector<ProviderCacheEntry>& entries) {
  if (path.empty() || path[0] != '/') {
    return Error{ErrorCode::kInvalidArgument, 0, "write provider cache", "path",
                 "the provider cache path must be absolute: '" + path + "'"};
  }
  QPC_TRY(MakeParents(path));
  // Unique per process and call: two sessions of one process may write at once.
  static std::atomic<unsigned> writes{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(writes.fetch_add(1));
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return IoError(errno, "open " + tmp);
  const std::string text = FormatProviderCache(entries);
  size_t put = 0;
  int err = 0;
  while (put < text.size()) {
    const ssize_t n = write(fd, text.data() + put, text.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    put += static_cast<size_t>(n);
  }
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    return IoError(err, "write " + path);
  }
  return Ok();
}

namespace {

// What WarmDeviceList() keeps for TakeWarmedProviders().
struct Warmed {
  std::mutex mutex;
  std::optional<std::pair<std::string, WarmedProviders>> kept;  // path, result
  bool first_take_began = false;
};

Warmed& WarmedState() {
  static Warmed* w = new Warmed;  // never destroyed: no exit-order race
  return *w;
}

}  // namespace

void WarmDeviceList(const std::string& path) {
  WarmedProviders warmed;
  if (!path.empty()) {
    warmed.entries = ReadProviderCache(path);
    warmed.preload = PreloadProviders(CachedLibraries(warmed.entries));
  }
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  HandDeviceListToOpen(list, count);
  if (path.empty()) return;
  Warmed& w = WarmedState();
  std::lock_guard lock(w.mutex);
  if (!w.first_take_began) w.kept.emplace(path, std::move(warmed));
}

std::optional<WarmedProviders> TakeWarmedProviders(const std::string& path) {
  Warmed& w = WarmedState();
  std::lock_guard lock(w.mutex);
  w.first_take_began = true;
  if (!w.kept || w.kept->first != path) {
    w.kept.reset();
    return std::nullopt;
  }
  WarmedProviders taken = std::move(w.kept->second);
  w.kept.reset();
  return taken;
}

Result<std::string> ProviderCacheFromEnvironment() {
  const char* env = std::getenv("QPC_PROVIDER_CACHE");
  if (env == nullptr) return DefaultProviderCachePath();
  const std::string value = env;
  if (value.empty() || value == "off") return std::string();
  if (value[0] != '/') {
    return Error{ErrorCode::kInvalidArgument, 0, "environment", "QPC_PROVIDER_CACHE",
                 "QPC_PROVIDER_CACHE must be an absolute path or 'off', not '" + value + "'"};
  }
  return value;
}

std::string DefaultProviderCachePath() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/qpconnect/providers";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/qpconnect/providers";
  return {};
}

}  // namespace qpconnect::verbs
