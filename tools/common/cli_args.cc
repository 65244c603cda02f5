// SPDX-License-Identifier: MIT
// The tools' option parser on CLI11 (Debian's libcli11-dev, header-only).
//
// Why CLI11 and not Boost.Program_options: CLI11 parses exactly the GNU forms
// the tools document (`-d rxe0`, `-drxe0`, `--ib-dev rxe0`, `--ib-dev=rxe0`,
// `--` ending the options) and, like getopt, takes the argument after an
// option that needs a value verbatim, even one starting with '-'. It keeps
// positionals in order among the options, lets one option have several short
// names (also_short) and keeps every value given, so "last value wins" is ours
// to choose. Program_options needs a separate positional description, treats
// `-drxe0` as an allowed-guessing style and would add a compiled Boost library
// to the tools. CLI11 is used per call (one CLI::App on the stack), so there
// is no global state.
//
// What the library changes, tested in tests/unit/tools/cli_args_test.cc:
//  - short flags may be grouped as in getopt: `-vj` is `-v -j` (an unknown
//    letter in the group is reported as that unknown option);
//  - an argument such as `-1` that looks like a negative number is a
//    positional (no tool has a digit as a short option), not an unknown
//    option; `---x` is a positional too;
//  - a flag accepts `--json=true` (its own value); any other `=value` is
//    still an error;
//  - `--ib-dev=` (nothing after '=') takes the next argument as its value,
//    and is "needs a value" at the end, where it used to be the empty string.
//
// A deprecated short name (OptionSpec::deprecated_short) is given to CLI11 as
// an option of its own, so that its use is seen (a note) and the later of it
// and the option's other names wins (parse_order()).
//
// FormatOptions() and ParseUnsigned() stay hand-written: the --help layout is
// the one docs/cli.md and the man pages (help2man) show, which CLI11's
// formatter would change, and ParseUnsigned's range wording is ours.
#include "cli_args.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string_view>

namespace qpconnect::tools {
Error Usage(std::string detail) {
  return Error{ErrorCode::kInvalidArgument, 0, "command line", "", std::move(detail)};
}

namespace {

// "-d,-x,--ib-dev": the names CLI11 knows the option by.
std::string NamesOf(const OptionSpec& s) {
  std::string names;
  auto add = [&names](const std::string& n) {
    if (!names.empty()) names += ',';
    names += n;
  };
  if (s.short_name != 0) add(std::string("-") + s.short_name);
  for (char c : s.also_short) add(std::string("-") + c);
  if (!s.long_name.empty()) add("--" + std::string(s.long_name));
  return names;
}

// Our wording of a CLI11 ArgumentMismatch, which names the option first: a
// missing value ("--ib-dev: 1 required NAME missing") or a flag given a value
// ("json was given a disallowed flag override").
std::string MismatchText(const std::string& what, std::span<const OptionSpec> specs) {
  for (const auto& s : specs) {
    const std::string dashed = "--" + std::string(s.long_name);
    if (s.takes_value && what.rfind(dashed + ":", 0) == 0) {
      return "option '" + dashed + "' needs a value (" + std::string(s.value_name) + ")";
    }
    if (!s.takes_value) {
      const std::string suffix = " was given a disallowed flag override";
      const std::string name =
          what.size() > suffix.size() &&
                  what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0
              ? what.substr(0, what.size() - suffix.size())
              : std::string();
      const bool ours =
          !name.empty() &&
          (name == s.long_name ||
           (name.size() == 1 &&
            (name[0] == s.short_name || s.also_short.find(name[0]) != std::string::npos ||
             s.deprecated_short.find(name[0]) != std::string::npos)));
      if (ours) return "option '" + dashed + "' takes no value";
    }
  }
  return what;
}

// A name used twice in a tool's own table (a short letter, or a long name).
std::optional<std::string> RepeatedName(std::span<const OptionSpec> specs) {
  std::set<std::string> seen;
  for (const auto& s : specs) {
    std::vector<std::string> names;
    if (s.short_name != 0) names.push_back(std::string("-") + s.short_name);
    for (char c : s.also_short) names.push_back(std::string("-") + c);
    for (char c : s.deprecated_short) names.push_back(std::string("-") + c);
    if (!s.long_name.empty()) names.push_back("--" + std::string(s.long_name));
    for (auto& n : names) {
      if (!seen.insert(n).second) return n;
    }
  }
  return std::nullopt;
}

// Whether `args` can name option `s` anywhere: a long argument "--NAME" or
// "--NAME=...", or a short one ("-dVALUE", "-vd") holding one of its letters.
// Over-counting (a letter inside a value) only registers an option that is
// then never matched. Only these options are given to CLI11, whose
// add_option() compares each new option with every earlier one: for the 60
// options of qp-connect that was 880,000 instructions and 15 ms of every
// start under the lab's emulation (issue 15, docs/performance.md).
bool Named(const OptionSpec& s, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a.size() < 2 || a[0] != '-') continue;
    if (a[1] == '-') {
      // "--" itself names nothing; what follows it may still be an option
      // when "--" was the value of the one before ("--timeout -- -v").
      const std::string_view name = std::string_view(a).substr(2, a.find('=') - 2);
      if (name == s.long_name) return true;
    } else {
      if (s.short_name != 0 && a.find(s.short_name, 1) != std::string::npos) return true;
      for (char c : s.also_short) {
        if (a.find(c, 1) != std::string::npos) return true;
      }
      for (char c : s.deprecated_short) {
        if (a.find(c, 1) != std::string::npos) return true;
      }
    }
  }
  return false;
}

// The note for deprecated short name `c` of `s`.
std::string DeprecatedNote(char c, const OptionSpec& s) {
  return std::string("-") + c + " is deprecated (a short option means one thing in every " +
         "qpconnect tool: docs/cli.md): write --" + std::string(s.long_name);
}

// "unknown option '--name'" for an argument CLI11 did not recognize.
std::string UnknownText(std::string arg) {
  if (arg.rfind("--", 0) == 0) {
    if (auto eq = arg.find('='); eq != std::string::npos) arg.resize(eq);
  } else if (arg.size() > 2) {
    arg.resize(2);  // "-zfoo": the letter is what is unknown
  }
  return "unknown option '" + arg + "'";
}

}  // namespace

std::optional<std::string> ParsedArgs::Get(const std::string& long_name) const {
  auto it = values.find(long_name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             std::span<const OptionSpec> specs) {
  CLI::App app;
  app.set_help_flag();  // the tools declare -h/--help themselves
  app.allow_extras();   // unknown options land in remaining(), reported below
  ParsedArgs out;
  if (auto twice = RepeatedName(specs)) {
    // A tool's own table is wrong.
    return Error{ErrorCode::kInvalidArgument, 0, "option table", "",
                 "the option table names " + *twice + " twice"};
  }
  std::vector<const CLI::Option*> options(specs.size(), nullptr);
  // A deprecated short name is an option of its own, so that its use is seen
  // (parse_order() tells which of the two came last): spec index, letter.
  std::vector<std::pair<size_t, char>> deprecated;
  std::vector<const CLI::Option*> deprecated_options;
  try {
    auto add = [&app](const OptionSpec& s, const std::string& names) {
      CLI::Option* o = s.takes_value ? app.add_option(names) : app.add_flag(names);
      if (s.takes_value) {
        o->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      } else {
        o->disable_flag_override();
      }
      return o;
    };
    for (size_t i = 0; i < specs.size(); ++i) {
      const OptionSpec& s = specs[i];
      if (!Named(s, args)) continue;
      options[i] = add(s, NamesOf(s));
      for (char c : s.deprecated_short) {
        deprecated.emplace_back(i, c);
        deprecated_options.push_back(add(s, std::string("-") + c));
      }
    }
    app.add_option("positionals", out.positionals)->expected(0, -1);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11's order
    app.parse(reversed);
  } catch (const CLI::ArgumentMismatch& e) {
    return Usage(MismatchText(e.what(), specs));
  } catch (const CLI::ConstructionError& e) {
    // A tool's own table is wrong (an invalid name).
    return Error{ErrorCode::kInvalidArgument, 0, "option table", "", e.what()};
  } catch (const CLI::Error& e) {
    return Usage(e.what());
  }
  // remaining() also holds the "--" that ended the options.
  for (const std::string& extra : app.remaining()) {
    if (extra != "--" && extra.size() >= 2 && extra[0] == '-') return Usage(UnknownText(extra));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    if (options[i] == nullptr) continue;
    const CLI::Option& o = *options[i];
    if (o.count() == 0) continue;
    out.values[std::string(specs[i].long_name)] = specs[i].takes_value ? o.results().back() : "";
  }
  for (size_t k = 0; k < deprecated.size(); ++k) {
    const CLI::Option& o = *deprecated_options[k];
    if (o.count() == 0) continue;
    const OptionSpec& s = specs[deprecated[k].first];
    out.notes.push_back(DeprecatedNote(deprecated[k].second, s));
    // The value of whichever spelling came last.
    const CLI::Option* last = nullptr;
    for (const CLI::Option* p : app.parse_order()) {
      if (p == &o || p == options[deprecated[k].first]) last = p;
    }
    if (last == &o) out.values[std::string(s.long_name)] = s.takes_value ? o.results().back() : "";
  }
  return out;
}

std::string FormatOptions(std::span<const OptionSpec> specs) {
  std::string s;
  for (const auto& o : specs) {
    std::string left = "  ";
    left += o.short_name ? std::string("-") + o.short_name + ", " : std::string("    ");
    for (char c : o.also_short) left += std::string("-") + c + ", ";
    left += "--";
    left += o.long_name;
    if (o.takes_value) {
      left += ' ';
      left += o.value_name;
    }
    if (left.size() < 30)
      left.resize(30, ' ');
    else
      left += "\n" + std::string(30, ' ');
    s += left;
    s += o.help;
    s += '\n';
  }
  return s;
}

Result<unsigned long> ParseUnsigned(const std::string& text, const std::string& what,
                                    unsigned long min, unsigned long max) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ') {
    return Usage(what + ": '" + text + "' is not a non-negative integer");
  }
  errno = 0;
  char* end = nullptr;
  unsigned long v = std::strtoul(text.c_str(), &end, 0);
  if (errno != 0 || end == text.c_str() || *end != '\0') {
    return Usage(what + ": '" + text + "' is not a non-negative integer");
  }
  if (v < min || v > max) {
    return Usage(what + ": " + text + " is out of range [" + std::to_string(min) + ", " +
                 std::to_string(max) + "]");
  }
  return v;
}

}  // namespace qpconnect::tools
