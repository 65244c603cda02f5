// SPDX-License-Identifier: MIT
// qp-validate's trace mode (issue 10, docs/trace.md): reads the qp-trace files
// of two or more processes into the observed-QP model, pairs their QPs, runs
// every validator rule on each pair as the programs applied it, explains each
// failed ibv_modify_qp, and names the QPs with no peer in the traces.
//
//   qp-validate [--json] TRACE TRACE [TRACE...]
//
// Exit status: 0 every pair sound (warnings and notes allowed), 1 errors (a
// finding of severity error, or a failed transition), 2 unusable input (a file
// unreadable, not a trace or malformed, or no QP in any trace).
//
// Thread-safety: touches no global state besides the streams it is given.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "input_files.h"

namespace qpconnect::tools::qp_validate {

// True when `files` are traces: a named file (not "-") starts with a qp-trace
// start record. The other files must then be traces too.
bool WantsTraceMode(const std::vector<std::string>& files);

// Runs the trace mode over `files` and returns the exit status.
int RunTraceMode(const std::vector<std::string>& files, bool json, const ReadInputFn& read,
                 std::ostream& out, std::ostream& err);

}  // namespace qpconnect::tools::qp_validate
