// SPDX-License-Identifier: MIT
#include "duration_arg.h"

#include <cstdint>
#include <cstdio>

#include "cli_args.h"

namespace qpconnect::tools {
namespace {

// 128 bits hold any whole number of int64 units times the hour in ns.
__extension__ typedef unsigned __int128 Wide;

constexpr int64_t kNsPerSecond = 1'000'000'000;

// Nanoseconds per unit; 0 for an unknown unit.
int64_t UnitNs(std::string_view unit) {
  if (unit.empty() || unit == "s") return kNsPerSecond;
  if (unit == "ms") return 1'000'000;
  if (unit == "m") return 60 * kNsPerSecond;
  if (unit == "h") return 3600 * kNsPerSecond;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Quoted(std::string_view name, const std::string& text) {
  return std::string(name) + ": '" + text + "'";
}

}  // namespace

std::string FormatSeconds(std::chrono::nanoseconds d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9f", static_cast<double>(d.count()) / kNsPerSecond);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + " s";
}

Result<ParsedDuration> ParseDuration(const std::string& text, const DurationOption& option) {
  const std::string hint = " (seconds: 2, 0.5, or with a unit: 500ms, 2s, 1m, 1h)";
  if (text.empty())
    return Usage(std::string(option.name) + ": an empty value is not a duration" + hint);
  if (text[0] == '-')
    return Usage(Quoted(option.name, text) + " is negative: a duration is 0 or more");
  // digits [. digits] | . digits, then the unit.
  size_t i = 0;
  Wide whole = 0;
  bool digits = false, too_large = false;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    digits = true;
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > static_cast<Wide>(INT64_MAX)) too_large = true;
    if (too_large) whole = static_cast<Wide>(INT64_MAX) + 1;
  }
  const bool bare_integer_so_far = digits;
  int64_t fraction_ns = 0;  // of one unit, in billionths
  bool has_fraction = false;
  if (i < text.size() && text[i] == '.') {
    has_fraction = true;
    ++i;
    int64_t scale = kNsPerSecond / 10;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      digits = true;
      fraction_ns += static_cast<int64_t>(text[i] - '0') * scale;  // beyond 9 digits: dropped
      scale /= 10;
    }
  }
  if (!digits) return Usage(Quoted(option.name, text) + " is not a duration" + hint);
  const std::string_view unit = std::string_view(text).substr(i);
  const int64_t unit_ns = UnitNs(unit);
  if (unit_ns == 0) {
    return Usage(Quoted(option.name, text) + ": unknown unit '" + std::string(unit) + "'" + hint);
  }
  ParsedDuration out;
  int64_t per_unit = unit_ns;
  const bool legacy = option.was_milliseconds && unit.empty() && !has_fraction &&
                      bare_integer_so_far && !too_large && whole >= kLegacyMillisecondsFrom;
  if (legacy) per_unit = 1'000'000;
  const Wide limit = static_cast<Wide>(INT64_MAX);
  const Wide ns =
      too_large ? limit + 1
                : whole * static_cast<Wide>(per_unit) +
                      static_cast<Wide>(fraction_ns) * static_cast<Wide>(per_unit) / kNsPerSecond;
  const std::string range =
      " [" + FormatSeconds(option.min) + ", " + FormatSeconds(option.max) + "]";
  if (ns > limit) return Usage(Quoted(option.name, text) + " is too large: the range is" + range);
  out.value = std::chrono::nanoseconds(static_cast<int64_t>(ns));
  if (out.value < option.min || out.value > option.max) {
    return Usage(Quoted(option.name, text) + " (" + FormatSeconds(out.value) + ") is out of range" +
                 range);
  }
  if (legacy) {
    const std::string secs = FormatSeconds(out.value);  // "3 s"
    out.note = std::string(option.name) + " " + text +
               " is read as milliseconds, as before (a bare number of " +
               std::to_string(kLegacyMillisecondsFrom) +
               " or more); that spelling is deprecated: write " + text + "ms or " +
               secs.substr(0, secs.size() - 2) + "s";
  }
  return out;
}

Result<std::optional<std::chrono::nanoseconds>> GetDuration(const ParsedArgs& args,
                                                            const DurationOption& option,
                                                            std::vector<std::string>& notes) {
  std::string name(option.name);
  name.erase(0, name.find_first_not_of('-'));  // "--timeout" -> "timeout"
  auto text = args.Get(name);
  if (!text) return std::optional<std::chrono::nanoseconds>();
  Result<ParsedDuration> d = ParseDuration(*text, option);
  if (!d) return std::move(d).error();
  if (!d->note.empty()) notes.push_back(d->note);
  return std::optional<std::chrono::nanoseconds>(d->value);
}

}  // namespace qpconnect::tools
