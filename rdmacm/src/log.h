// SPDX-License-Identifier: MIT
// Where the library says what a program's return values and events cannot:
// which mapping placed an address, which rule refused a connection, which
// stray client was turned away. One line each, "qpcm: ..." on stderr, or
// appended to the file QPCM_LOG names.
//
// Thread-safety: any thread.
#pragma once

#include <string_view>

namespace qpconnect::rdmacm {

void LogLine(std::string_view line) noexcept;

// A failed call, as librdmacm fails one: logs `why` (one line, as LogLine),
// sets errno to `err` and returns -1 for the entry point to return.
// `once_per` not empty: the line is logged only the first time a failure
// names that key in this process, later ones fail without a word (a probe a
// program repeats: libfabric's verbs provider binds every interface address
// each time it starts a lookup, and one that no device serves is no error).
int Fail(int err, std::string_view why, std::string_view once_per = {}) noexcept;

// With QPCM_DEBUG set: one line stamped "+N us" with CLOCK_MONOTONIC in
// microseconds (comparable between the two programs of a run on one host),
// for finding where a connection's time goes.
bool DebugOn() noexcept;
void LogDebug(std::string_view line) noexcept;

}  // namespace qpconnect::rdmacm

// LogDebug(TEXT), TEXT built only with QPCM_DEBUG set: the stamps sit on the
// connection path, where building a dozen strings per connection for nothing
// is a cost under the lab's emulator.
#define QPCM_DEBUG_LINE(text)                                                \
  do {                                                                       \
    if (::qpconnect::rdmacm::DebugOn()) ::qpconnect::rdmacm::LogDebug(text); \
  } while (0)
