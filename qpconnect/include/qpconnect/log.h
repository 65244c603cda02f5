// SPDX-License-Identifier: MIT
// The library's only way to say anything outside a return value: a log hook
// the embedding program sets. Nothing in qpconnect/ or oob/ writes to
// stdout/stderr; warnings that have no caller to return to (a failed destroy
// in a deleter, a peer rejected by a listening server) go through Log().
//
// Default: silent (no handler). The tools install a handler that writes to
// stderr.
//
// Thread-safety: SetLogHandler() and Log() may be called from any thread; the
// handler is called with no library lock held, possibly from several threads at
// once, so it must be thread-safe itself. A handler must not throw.
#pragma once

#include <functional>
#include <string_view>

namespace qpconnect {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// "debug", "info", "warning", "error".
const char* LogLevelName(LogLevel level);

using LogHandler = std::function<void(LogLevel level, std::string_view message)>;

// Installs `handler` (an empty function restores the silent default) and
// returns the previous one. Messages below `min_level` are dropped before the
// handler is called.
LogHandler SetLogHandler(LogHandler handler, LogLevel min_level = LogLevel::kWarning);

// Hands `message` to the handler, if any and if `level` is at least its
// minimum. Never throws; a throwing handler's exception is swallowed.
void Log(LogLevel level, std::string_view message) noexcept;

}  // namespace qpconnect
