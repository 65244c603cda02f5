// SPDX-License-Identifier: MIT
// Reading qp-trace files (docs/trace.md, "The trace format") into the
// observed-QP model (qpconnect/observe/observed.h).
//
// A trace is JSON Lines: a start record ({"qp_trace": 1, "event": "start",
// ...}), then one record per call the preload saw, and an end record when the
// process exited normally. The reader rebuilds each QP: its transitions in
// call order, the state it reached, its port facts, GID table and P_Key, and
// from them this side's EndpointInfo and the attributes it applied, which the
// validator then judges against its peer's.
//
// Input is untrusted: every field is type- and range-checked, the line length
// is capped, and a record the reader does not know is skipped. A last line cut
// short (the process was killed while writing) is dropped with a note.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "qpconnect/observe/observed.h"
#include "qpconnect/result.h"

namespace qpconnect::trace {

// The trace format version this reader understands.
inline constexpr int kTraceFormatVersion = 1;

// True when `head` (the first bytes of a file) starts with a qp-trace start
// record: `{"qp_trace":`, allowing leading white space.
bool LooksLikeTrace(std::string_view head);

// The process a trace file recorded.
struct TraceHeader {
  std::string host;
  int pid = 0;
  std::string comm;
  bool complete = false;  // it has an end record (the process exited normally)
  size_t qps = 0;         // QPs read from it
};

// Reads one trace file, named `origin` in messages, and appends its QPs (and
// notes) to `out`. Errors (nothing is appended then):
//   kProtocol         not a trace, a malformed record, a field of the wrong type
//                     or out of range; the detail names the line and the field;
//   kInvalidArgument  a trace format version newer than kTraceFormatVersion.
Result<TraceHeader> ReadTrace(std::string_view text, const std::string& origin, Observation& out);

// The mask bits whose values `qp.applied` holds: those of its successful
// transitions, and of the last transition when that one failed (the attempt
// the program was left with). 0 for a QP with no transition.
int AppliedMask(const ObservedQp& qp);

}  // namespace qpconnect::trace
