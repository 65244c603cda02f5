#include "cli_args.h"

#include <cerrno>
#include <cstdlib>

namespace qpconnect::tools {
namespace {

Error Usage(std::string detail) {
  return Error{ErrorCode::kInvalidArgument, 0, "command line", "", std::move(detail)};
}

}  // namespace

std::optional<std::string> ParsedArgs::Get(const std::string& long_name) const {
  auto it = values.find(long_name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             const std::vector<OptionSpec>& specs) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.positionals.insert(out.positionals.end(), args.begin() + static_cast<long>(i) + 1,
                             args.end());
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      out.positionals.push_back(a);
      continue;
    }
    const OptionSpec* spec = nullptr;
    std::optional<std::string> inline_value;
    if (a[1] == '-') {
      std::string name = a.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
      for (const auto& s : specs) {
        if (s.long_name == name) spec = &s;
      }
      if (spec == nullptr) return Usage("unknown option '--" + name + "'");
    } else {
      for (const auto& s : specs) {
        if ((s.short_name != 0 && s.short_name == a[1]) ||
            s.also_short.find(a[1]) != std::string::npos) {
          spec = &s;
        }
      }
      if (spec == nullptr) return Usage(std::string("unknown option '-") + a[1] + "'");
      if (a.size() > 2) {
        if (!spec->takes_value)
          return Usage("option '-" + std::string(1, a[1]) + "' takes no value");
        inline_value = a.substr(2);
      }
    }
    if (!spec->takes_value) {
      if (inline_value) return Usage("option '--" + spec->long_name + "' takes no value");
      out.values[spec->long_name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        return Usage("option '--" + spec->long_name + "' needs a value (" + spec->value_name + ")");
      }
      inline_value = args[++i];
    }
    out.values[spec->long_name] = *inline_value;
  }
  return out;
}

std::string FormatOptions(const std::vector<OptionSpec>& specs) {
  std::string s;
  for (const auto& o : specs) {
    std::string left = "  ";
    left += o.short_name ? std::string("-") + o.short_name + ", " : std::string("    ");
    for (char c : o.also_short) left += std::string("-") + c + ", ";
    left += "--" + o.long_name;
    if (o.takes_value) left += " " + o.value_name;
    if (left.size() < 30)
      left.resize(30, ' ');
    else
      left += "\n" + std::string(30, ' ');
    s += left + o.help + "\n";
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
