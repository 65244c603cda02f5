// A small command-line parser for the tools: GNU-style short and long options
// (`-d rxe0`, `-drxe0`, `--ib-dev rxe0`, `--ib-dev=rxe0`), flags, positionals
// and `--`. No global state, so tools can run in-process in tests.
//
// Thread-safety: plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/result.h"

namespace qpconnect::tools {

struct OptionSpec {
  char short_name;  // 0 if none
  std::string long_name;
  bool takes_value;
  std::string value_name;  // for help: "NAME"
  std::string help;
  // More short names for the same option, as users of other tools type them
  // (perftest's -x for -g).
  std::string also_short = {};
};

struct ParsedArgs {
  std::map<std::string, std::string> values;  // long name -> last value ("" for flags)
  std::vector<std::string> positionals;

  bool Has(const std::string& long_name) const { return values.count(long_name) != 0; }
  std::optional<std::string> Get(const std::string& long_name) const;
};

// Parses args (without argv[0]). kInvalidArgument naming the offending option
// for an unknown option or a missing value.
Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             const std::vector<OptionSpec>& specs);

// "  -d, --ib-dev NAME      help" lines for --help.
std::string FormatOptions(const std::vector<OptionSpec>& specs);

// Parses an unsigned integer (decimal, or 0x hex) within [min, max].
// kInvalidArgument naming `what` otherwise.
Result<unsigned long> ParseUnsigned(const std::string& text, const std::string& what,
                                    unsigned long min, unsigned long max);

}  // namespace qpconnect::tools
