// SPDX-License-Identifier: MIT
// qp-validate's snapshot mode (issue 17, docs/inspect.md): kernel snapshots
// written by `qp-inspect -o`, alone or mixed with qp-trace files and endpoint
// dumps, read into the observed-QP model, paired (qpconnect/observe/pairing.h) and
// judged: every pair with a snapshot side by the live rules
// (qpconnect/observe/live_judge.h), pairs of traces and dumps by the validator's rules
// as the trace mode judges them.
//
//   qp-validate [--json] [--svg FILE] [--hosts LIST] [--hostfile FILE]
//               SNAPSHOT [SNAPSHOT|TRACE|DUMP...]
//
// Text: the job's summary first (qpconnect/observe/job_summary.h: culprits
// by host, process and rule), then the pairs: every pair when there are at
// most kListAllPairs, else the pairs that are not sound (the sound ones are
// counted). --json: everything, every pair included, with the summary.
// --svg FILE: the host-by-host matrix (qpconnect/observe/verdict_svg.h).
// A job file of qp-inspect-mpi named on the command line is read as a
// stream, one rank at a time, at any size (ReadJobSnapshots); the JSON
// verdict is written as it is produced, never held whole.
// --hosts, --hostfile: the job's host list (qpconnect/observe/job_hosts.h),
// with that of a job file: a listed host no input names sent no snapshot.
//
// Exit status: 0 every pair sound (warnings and notes allowed), 1 an error
// finding or a listed host that sent no snapshot, 2 unusable input (unreadable, not a
// snapshot/trace/dump, malformed, or no QP in any input).
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

// With more pairs than this, the text lists only the pairs that are not sound.
inline constexpr size_t kListAllPairs = 64;

struct SnapshotModeOptions {
  bool json = false;
  std::string svg;                 // the matrix's file; "" none
  std::vector<std::string> hosts;  // the job's host list (--hosts, --hostfile); empty none
  // Progress lines on stderr after 2 s, a line a second (tools/common/
  // progress.h); off with --quiet.
  bool progress = false;
};

// Runs the snapshot mode over `files` and returns the exit status.
int RunSnapshotMode(const std::vector<std::string>& files, const SnapshotModeOptions& options,
                    const ReadInputFn& read, std::ostream& out, std::ostream& err);

// Every rule `--list-rules` prints: the validator's catalogue, then the live
// rules (family "live").
std::vector<RuleInfo> AllRules();

// The file implementing `rule`: "qpconnect/src/validate/rules_<family>.cc",
// or the live rules' file.
std::string RuleFile(const RuleInfo& rule);

}  // namespace qpconnect::tools::qp_validate
