// SPDX-License-Identifier: MIT
// Every duration a tool's option takes, read one way (docs/cli.md,
// "Durations"): seconds, with a fraction ("0.5") or a unit suffix ("500ms",
// "2s", "1.5m", "1h"). No sign, no spaces, no exponent.
//
// An option that took milliseconds before (qp-info --timeout, qp-cm
// --timeout) still reads its old spelling: a bare whole number of 100 or
// more is milliseconds, with a deprecation note for stderr. A seconds value
// of 100 or more is then written with its unit ("120s").
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli_args.h"

#include "qpconnect/result.h"

namespace qpconnect::tools {

// What one duration option accepts.
struct DurationOption {
  std::string_view name;  // "--timeout", as the messages name it
  std::chrono::nanoseconds min;
  std::chrono::nanoseconds max;
  bool was_milliseconds = false;  // the option took milliseconds before
};

// A bare whole number from which an option that was in milliseconds reads
// milliseconds (deprecated).
inline constexpr unsigned long kLegacyMillisecondsFrom = 100;

struct ParsedDuration {
  std::chrono::nanoseconds value{0};
  std::string note;  // a deprecation note for stderr, "" when none
};

// Parses `text` as a duration for `option`. kInvalidArgument (cli_args.h's
// Usage()) naming the option and the text: empty, negative, not a number,
// an unknown unit, too large to hold, or outside [min, max].
Result<ParsedDuration> ParseDuration(const std::string& text, const DurationOption& option);

// The duration option `option` (its name is "--LONG") of `args`: nullopt
// when absent; a deprecation note, if any, appended to `notes`.
Result<std::optional<std::chrono::nanoseconds>> GetDuration(const ParsedArgs& args,
                                                            const DurationOption& option,
                                                            std::vector<std::string>& notes);

// A duration as the messages write it: "0.5 s", "600 s", "0.001 s".
std::string FormatSeconds(std::chrono::nanoseconds d);

}  // namespace qpconnect::tools
