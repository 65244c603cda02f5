// SPDX-License-Identifier: MIT
#include "log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <set>
#include <string>

#include "lock.h"
#include "qpconnect/oob/codec.h"  // kWireVersion, kWireMinorVersion
#include "qpconnect/oob/frame.h"  // kFrameVersion
#include "qpconnect/rdmacm/protocol_version.h"

namespace qpconnect::rdmacm {

void LogLine(std::string_view line) noexcept {
  static const int fd = [] {
    const char* path = std::getenv("QPCM_LOG");
    if (path == nullptr || *path == '\0') return 2;
    int f = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    return f >= 0 ? f : 2;
  }();
  try {
    std::string text = "qpcm[" + std::to_string(getpid()) + "]: ";
    text.append(line);
    text.push_back('\n');
    (void)!write(fd, text.data(), text.size());  // one write: lines never interleave
  } catch (...) {
  }
}

namespace {

// The keys Fail's once_per has named, for the process's life.
Mutex said_mu;
std::set<std::string, std::less<>>& Said() QPCM_REQUIRES(said_mu) {
  static auto* said = new std::set<std::string, std::less<>>;
  return *said;
}

// Whether `key` is named here for the first time in this process.
bool FirstTime(std::string_view key) noexcept {
  MutexGuard guard(said_mu);
  if (Said().contains(key)) return false;
  try {
    Said().emplace(key);
  } catch (...) {
  }
  return true;
}

}  // namespace

int Fail(int err, std::string_view why, std::string_view once_per) noexcept {
  if (once_per.empty() || FirstTime(once_per)) LogLine(why);
  errno = err;
  return -1;
}

bool DebugOn() noexcept {
  static const bool on = [] {
    if (std::getenv("QPCM_DEBUG") == nullptr) return false;
    // Once, as the library loads (kDebugAtLoad): every wire version in
    // use, as every tool's --version names them.
    try {
      LogLine("debug: wire versions: endpoint format " + std::to_string(oob::kWireVersion) + "." +
              std::to_string(oob::kWireMinorVersion) + ", out-of-band frame " +
              std::to_string(oob::kFrameVersion) + ", " + kProtocolName + " protocol " +
              std::to_string(kProtocolVersion));
    } catch (...) {
    }
    return true;
  }();
  return on;
}

namespace {
// With QPCM_DEBUG, the versions line comes when the library loads, before
// the program calls anything.
[[maybe_unused]] const bool kDebugAtLoad = DebugOn();
}  // namespace

void LogDebug(std::string_view line) noexcept {
  if (!DebugOn()) return;
  // CLOCK_MONOTONIC, the same clock in every process on the host: two
  // programs' stamps line up.
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now().time_since_epoch())
                .count();
  try {
    LogLine("+" + std::to_string(us) + " us " + std::string(line));
  } catch (...) {
  }
}

}  // namespace qpconnect::rdmacm
