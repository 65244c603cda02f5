// SPDX-License-Identifier: MIT
// Launching an unmodified program with one of qpconnect's libraries in its
// dynamic linker's path: what qp-trace (the trace preload) and qp-cm (the
// rdma_cm library) share.
//
//   TOOL [OPTIONS] [--] PROGRAM [ARGS...]
//
// The tool's options stop at "--" or at the first word that is not an option
// or an option's value. The library is found at an override path (an
// environment variable), next to the tool in the build tree, or at its
// installed place relative to the tool. ExecProgram sets the variables and
// execs: PROGRAM keeps the tool's pid, signals and exit status; the tool's own
// statuses are 126 (cannot run PROGRAM) and 127 (not found), as env(1)'s.
//
// Thread-safety: FindLibrary and SplitProgram are pure functions of their
// arguments and the file system; ExecProgram execs.
#pragma once

#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli_args.h"
#include "exit_codes.h"  // kExitCannotRun, kExitNotFound
#include "qpconnect/result.h"

namespace qpconnect::tools {

// Splits args into the tool's options (with their values, per `specs`) and
// PROGRAM [ARGS...].
void SplitProgram(const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                  std::vector<std::string>& options, std::vector<std::string>& program);

// The absolute path of a library: `override_path` when set (kNotFound if it
// is not a file, naming `override_name`), else the first of `candidates`
// (relative ones taken from `self_dir`) that is a file; kNotFound listing
// them otherwise.
Result<std::string> FindLibrary(const std::string& library, const std::string& override_name,
                                const std::string& override_path, const std::string& self_dir,
                                const std::vector<std::string>& candidates);

// The directory of this process's executable ("" if unknown).
std::string SelfDir();

// "NEW" when OLD is empty, else "NEW:OLD" (LD_PRELOAD, LD_LIBRARY_PATH).
std::string PrependPath(const std::string& added, const char* existing);

// Sets `env` and execs `argv`; returns only on failure, after writing
// "TOOL: PROGRAM: reason" to `err`, with kExitNotFound or kExitCannotRun.
int ExecProgram(const std::string& tool, std::vector<std::string> argv,
                const std::vector<std::pair<std::string, std::string>>& env, std::ostream& out,
                std::ostream& err);

// What a launcher tool execs: PROGRAM [ARGS...] and the variables it sets.
struct Launch {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // in the order set
  std::vector<std::string> notes;  // deprecation notes, written to stderr before the exec
};

// The start of a launcher's PrepareLaunch(): splits `args` (SplitProgram)
// into the tool's options, parsed and returned, and PROGRAM [ARGS...] in
// `launch.argv`. Usage() errors: a bad option (ParseArgs), a word left among
// the options ("unexpected 'WORD'"), no PROGRAM ("missing the PROGRAM to
// VERB", with `verb` "run" or "trace").
Result<ParsedArgs> ParseLauncherArgs(const std::vector<std::string>& args,
                                     std::span<const OptionSpec> specs, std::string_view verb,
                                     Launch& launch);

// A launcher tool's Run(): --help (`help`) and --version answered, else
// `prepare(args)` builds the launch; its error is written as "TOOL: ..."
// (with "Try 'TOOL --help'." for a bad command line) and returns kExitUsage;
// otherwise ExecProgram.
int RunLauncher(const std::string& tool, const std::vector<std::string>& args,
                std::span<const OptionSpec> specs, const std::function<std::string()>& help,
                const std::function<Result<Launch>(const std::vector<std::string>&)>& prepare,
                std::ostream& out, std::ostream& err);

// RunLauncher() for a tool whose launch is prepared against its process's
// context: `prepare(args, context())`, the context read only when needed.
template <typename Context>
int RunLauncher(const std::string& tool, const std::vector<std::string>& args,
                std::span<const OptionSpec> specs, const std::function<std::string()>& help,
                Result<Launch> (*prepare)(const std::vector<std::string>&, const Context&),
                Context (*context)(), std::ostream& out, std::ostream& err) {
  return RunLauncher(
      tool, args, specs, help,
      [prepare, context](const std::vector<std::string>& a) { return prepare(a, context()); }, out,
      err);
}

}  // namespace qpconnect::tools
