// SPDX-License-Identifier: MIT
// A tool's answers to its command line before it does any work: --help and
// --version, and the two lines of a bad command line. The wording is every
// tool's, so it is written here once:
//
//   TOOL: WHAT
//   Try 'TOOL --help'.
//
// Thread-safety: writes only to the streams it is given.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli_args.h"

namespace qpconnect::tools {

// Writes "TOOL: WHAT" and "Try 'TOOL --help'." to `err`; returns kExitUsage.
int UsageError(std::string_view tool, std::ostream& err, std::string_view what);

// Writes each note (a deprecated spelling used: ParsedArgs::notes,
// duration_arg.h) as "TOOL: NOTE" to `err`.
void PrintNotes(std::string_view tool, const std::vector<std::string>& notes, std::ostream& err);

// When `args` asks for --help: writes help() to `out`; else for --version:
// VersionText(tool) (version.h). Either returns kExitOk; nullopt when `args`
// asks for neither.
std::optional<int> AnswerHelpOrVersion(const ParsedArgs& args, std::string_view tool,
                                       const std::function<std::string()>& help, std::ostream& out);

}  // namespace qpconnect::tools
