// SPDX-License-Identifier: MIT
// qp-trace: runs an unmodified program with the preload library libqptrace.so
// and records its queue pairs' transitions, one JSON Lines file per process,
// for `qp-validate TRACE...` (docs/trace.md).
//
//   qp-trace [-o FILE] [--] PROGRAM [ARGS...]
//
// qp-trace sets LD_PRELOAD (in front of any the caller set), QP_TRACE_FILE
// (the output pattern made absolute: %p = pid, %h = host name, %% = %) and
// QP_TRACE_PID, then execs PROGRAM: the program keeps qp-trace's pid, its
// signals and its exit status. qp-trace's own statuses (tools/common/
// exit_codes.h): 2 bad command line, no preload library or an unwritable
// output directory; 126 PROGRAM cannot be run; 127 PROGRAM not found.
//
// Thread-safety: Run() execs on success; PrepareLaunch() is a pure function
// of its arguments and the file system.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "launch.h"
#include "qpconnect/result.h"

namespace qpconnect::tools::qp_trace {

using Launch = tools::Launch;  // launch.h

// Where things are, for PrepareLaunch (tests give their own).
struct LaunchContext {
  std::string cwd;                  // absolute; relative -o paths are taken from here
  std::string self_dir;             // directory of the qp-trace executable
  std::string preload_override;     // $QP_TRACE_PRELOAD, or empty
  std::string existing_ld_preload;  // $LD_PRELOAD, or empty
  int pid = 0;                      // qp-trace's pid, which PROGRAM keeps
};

// The context of this process (getcwd, /proc/self/exe, the environment).
LaunchContext CurrentContext();

// Builds the launch from `args` (argv without argv[0], options before
// PROGRAM). kInvalidArgument for a bad command line (-h/--version are not
// handled here), kNotFound when libqptrace.so is nowhere to be found, kIo
// when the output directory is not writable.
Result<Launch> PrepareLaunch(const std::vector<std::string>& args, const LaunchContext& context);

// Runs qp-trace with `args`; returns only when it does not exec PROGRAM (help,
// version, errors), with the exit status.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace qpconnect::tools::qp_trace
