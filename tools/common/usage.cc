// SPDX-License-Identifier: MIT
#include "usage.h"

#include "exit_codes.h"
#include "version.h"

namespace qpconnect::tools {

int UsageError(std::string_view tool, std::ostream& err, std::string_view what) {
  err << tool << ": " << what << "\nTry '" << tool << " --help'.\n";
  return kExitUsage;
}

void PrintNotes(std::string_view tool, const std::vector<std::string>& notes, std::ostream& err) {
  for (const std::string& n : notes) err << tool << ": " << n << "\n";
}

std::optional<int> AnswerHelpOrVersion(const ParsedArgs& args, std::string_view tool,
                                       const std::function<std::string()>& help,
                                       std::ostream& out) {
  if (args.Has("help")) {
    out << help();
    return kExitOk;
  }
  if (args.Has("version")) {
    out << VersionText(tool);
    return kExitOk;
  }
  return std::nullopt;
}

}  // namespace qpconnect::tools
