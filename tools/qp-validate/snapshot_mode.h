// qp-validate's snapshot mode (issue 17, docs/inspect.md): kernel snapshots
// written by `qp-inspect -o`, alone or mixed with qp-trace files and endpoint
// dumps, read into the observed-QP model, paired (qpconnect/observe/pairing.h) and
// judged: every pair with a snapshot side by the live rules
// (qpconnect/observe/live_judge.h), pairs of traces and dumps by the validator's rules
// as the trace mode judges them.
//
//   qp-validate [--json] SNAPSHOT [SNAPSHOT|TRACE|DUMP...]
//
// Exit status: 0 every pair sound (warnings and notes allowed), 1 an error
// finding, 2 unusable input (unreadable, not a snapshot/trace/dump, malformed,
// or no QP in any input).
//
// Thread-safety: touches no global state besides the streams it is given.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/validate.h"
#include "trace_mode.h"

namespace qpconnect::tools::qp_validate {

// True when a named file (not "-") among `files` is a qp-inspect snapshot.
bool WantsSnapshotMode(const std::vector<std::string>& files);

// Runs the snapshot mode over `files` and returns the exit status.
int RunSnapshotMode(const std::vector<std::string>& files, bool json, const ReadInputFn& read,
                    std::ostream& out, std::ostream& err);

// Every rule `--list-rules` prints: the validator's catalogue, then the live
// rules (family "live").
std::vector<RuleInfo> AllRules();

// The file implementing `rule`: "qpconnect/src/validate/rules_<family>.cc",
// or the live rules' file.
std::string RuleFile(const RuleInfo& rule);

}  // namespace qpconnect::tools::qp_validate
