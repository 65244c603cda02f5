// SPDX-License-Identifier: MIT
#include "log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>

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

int Fail(int err, std::string_view why) noexcept {
  LogLine(why);
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
