// SPDX-License-Identifier: MIT
#include "run.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cli_args.h"
#include "exit_codes.h"
#include "launch.h"
#include "version.h"

namespace qpconnect::tools::qp_trace {
namespace {

constexpr const char* kDefaultOutput = "qp-trace.%p.json";

// The option table: constant data (cli_args.h).
constexpr OptionSpec kSpecs[] = {
    {'o', "output", true, "FILE",
     "trace file of each process (%p = pid, %h = host name, %% = %); default "
     "qp-trace.%p.json"},
    {'h', "help", false, "", "show this help and exit"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

// qp-trace's own statuses (exit_codes.h's table); otherwise PROGRAM's.
constexpr ExitCode kExits[] = {kExitUsage, kExitCannotRun, kExitNotFound};

std::string Help() {
  return "Usage: qp-trace [-o FILE] [--] PROGRAM [ARGS...]\n"
         "\n"
         "Runs PROGRAM unmodified with a preload library that records every queue pair it\n"
         "creates and every ibv_modify_qp it makes (attributes, mask, result, errno), with\n"
         "the port, GID table and P_Key the QP uses, in one JSON Lines file per process.\n"
         "Trace the program on each host, then give all the files to qp-validate, which\n"
         "pairs the QPs and judges each pair: `qp-validate a.*.json b.*.json`.\n"
         "\n"
         "A process other than PROGRAM (its children) writes FILE.PID when FILE has no\n"
         "%p. Only the control path is recorded; PROGRAM's behaviour, output and exit\n"
         "status are its own. What the preload cannot see: docs/trace.md.\n"
         "\n"
         "Options:\n" +
         FormatOptions(Specs()) +
         "\n"
         "Environment: QP_TRACE_PRELOAD overrides the path of libqptrace.so.\n"
         "\n"
         "qp-trace execs PROGRAM, which keeps qp-trace's pid and exits with its own status;\n"
         "qp-trace itself exits only when it cannot (2: a bad command line, no preload\n"
         "library or an unwritable output directory).\n"
         "\n" +
         ExitStatusHelp(kExits);
}

Result<std::string> FindPreload(const LaunchContext& c) {
  return FindLibrary("libqptrace.so", "QP_TRACE_PRELOAD", c.preload_override, c.self_dir,
                     {"preload/libqptrace.so", QPC_TRACE_PRELOAD_INSTALLED});
}

}  // namespace

LaunchContext CurrentContext() {
  LaunchContext c;
  std::error_code ec;
  c.cwd = std::filesystem::current_path(ec).string();
  c.self_dir = SelfDir();
  if (const char* v = std::getenv("QP_TRACE_PRELOAD")) c.preload_override = v;
  if (const char* v = std::getenv("LD_PRELOAD")) c.existing_ld_preload = v;
  c.pid = static_cast<int>(getpid());
  return c;
}

Result<Launch> PrepareLaunch(const std::vector<std::string>& args, const LaunchContext& context) {
  Launch launch;
  Result<ParsedArgs> parsed = ParseLauncherArgs(args, Specs(), "trace", launch);
  if (!parsed) return parsed.error();

  std::string output = parsed->Get("output").value_or(kDefaultOutput);
  if (output.empty()) return Usage("--output needs a file name");
  std::filesystem::path out_path(output);
  if (out_path.is_relative()) out_path = std::filesystem::path(context.cwd) / out_path;
  out_path = out_path.lexically_normal();
  if (!out_path.has_filename()) return Usage("--output '" + output + "' names a directory");
  const std::string dir = out_path.parent_path().string();
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    const int e = errno;
    return Error{ErrorCode::kIo, e, "output directory", "",
                 dir + ": cannot create files there: " + std::strerror(e)};
  }

  Result<std::string> preload = FindPreload(context);
  if (!preload) return preload.error();
  std::string ld_preload = PrependPath(*preload, context.existing_ld_preload.c_str());
  launch.env = {{"LD_PRELOAD", ld_preload},
                {"QP_TRACE_FILE", out_path.string()},
                {"QP_TRACE_PID", std::to_string(context.pid)}};
  return launch;
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return RunLauncher("qp-trace", args, Specs(), Help, PrepareLaunch, CurrentContext, out, err);
}

}  // namespace qpconnect::tools::qp_trace
