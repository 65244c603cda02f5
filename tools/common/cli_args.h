// SPDX-License-Identifier: MIT
// A small command-line parser for the tools: GNU-style short and long options
// (`-d rxe0`, `-drxe0`, `--ib-dev rxe0`, `--ib-dev=rxe0`), flags, positionals
// and `--`. No global state, so tools can run in-process in tests.
//
// Thread-safety: plain values.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/result.h"

namespace qpconnect::tools {

// One entry of a tool's option table. Views of string literals, so that a
// table is a constexpr array: constant data, built by nothing at run time
// (issue 15: qp-connect's table of 45 entries, built as std::strings on every
// start, ran 930 distinct instructions, about 1.4 ms under the lab's
// emulation).
struct OptionSpec {
  char short_name;  // 0 if none
  std::string_view long_name;
  bool takes_value;
  std::string_view value_name;  // for help: "NAME"
  std::string_view help;
  // More short names for the same option, as users of other tools type them
  // (perftest's -x for -g).
  std::string_view also_short = {};
  // Short names this option had before a letter was given one meaning across
  // the tools (docs/cli.md, "Short options"): still read, never shown in
  // --help, each use adding a deprecation note (ParsedArgs::notes).
  std::string_view deprecated_short = {};
};

struct ParsedArgs {
  std::map<std::string, std::string> values;  // long name -> last value ("" for flags)
  std::vector<std::string> positionals;
  // Deprecation notes for stderr ("-l is deprecated: write --sl ..."), one per
  // deprecated spelling used; the tool prints each as "TOOL: NOTE".
  std::vector<std::string> notes;

  bool Has(const std::string& long_name) const { return values.count(long_name) != 0; }
  std::optional<std::string> Get(const std::string& long_name) const;
};

// Parses args (without argv[0]). kInvalidArgument naming the offending option
// for an unknown option or a missing value.
Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             std::span<const OptionSpec> specs);

// A bad command line: kInvalidArgument, operation "command line", `detail`
// saying what is wrong (the tools print the detail alone).
Error Usage(std::string detail);

// "  -d, --ib-dev NAME      help" lines for --help (deprecated_short not shown).
std::string FormatOptions(std::span<const OptionSpec> specs);

// Parses an unsigned integer (decimal, or 0x hex) within [min, max].
// kInvalidArgument naming `what` otherwise.
Result<unsigned long> ParseUnsigned(const std::string& text, const std::string& what,
                                    unsigned long min, unsigned long max);

}  // namespace qpconnect::tools
