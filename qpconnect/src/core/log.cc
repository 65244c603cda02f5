// SPDX-License-Identifier: MIT
#include "qpconnect/log.h"

#include <memory>
#include <mutex>
#include <utility>

namespace qpconnect {
namespace {

struct Sink {
  LogHandler handler;
  LogLevel min_level = LogLevel::kWarning;
};

std::mutex& SinkMutex() {
  static std::mutex m;
  return m;
}

// Replaced whole under the mutex and copied out (a shared_ptr), so Log() never
// calls the handler with the mutex held.
std::shared_ptr<const Sink>& CurrentSink() {
  static std::shared_ptr<const Sink> sink;
  return sink;
}

}  // namespace

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

LogHandler SetLogHandler(LogHandler handler, LogLevel min_level) {
  std::shared_ptr<const Sink> next;
  if (handler) next = std::make_shared<const Sink>(Sink{std::move(handler), min_level});
  std::lock_guard<std::mutex> lock(SinkMutex());
  std::shared_ptr<const Sink> previous = std::exchange(CurrentSink(), std::move(next));
  return previous ? previous->handler : LogHandler{};
}

void Log(LogLevel level, std::string_view message) noexcept {
  std::shared_ptr<const Sink> sink;
  {
    std::lock_guard<std::mutex> lock(SinkMutex());
    sink = CurrentSink();
  }
  if (!sink || static_cast<int>(level) < static_cast<int>(sink->min_level)) return;
  try {
    sink->handler(level, message);
  } catch (...) {
    // A log hook must not break the library; the message is lost.
  }
}

}  // namespace qpconnect
