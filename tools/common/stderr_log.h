// SPDX-License-Identifier: MIT
// The tools' log hook: the library is silent by default (qpconnect/log.h);
// a tool routes its warnings to stderr as "<tool>: warning: <message>".
//
// Thread-safety: the installed handler serialises its writes.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "qpconnect/log.h"

namespace qpconnect::tools {

// Installs the stderr handler for `tool` (warnings and errors).
inline void InstallStderrLog(const char* tool) {
  SetLogHandler([tool](LogLevel level, std::string_view message) {
    std::string line = std::string(tool) + ": " + LogLevelName(level) + ": ";
    line.append(message);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);  // one write: lines do not interleave
  });
}

}  // namespace qpconnect::tools
