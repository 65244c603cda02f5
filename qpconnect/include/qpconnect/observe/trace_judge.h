// SPDX-License-Identifier: MIT
// Judging traced QPs: pair them (qpconnect/observe/pairing.h), run every validator
// rule on each pair as actually applied (qpconnect/validate.h), explain each
// failed ibv_modify_qp, and say which QPs have no peer in the traces.
//
// Each side of a pair is judged with the EndpointInfo the reader rebuilt and
// the attributes its program applied (its plan). What no trace can show is
// filled in from the peer and said in a note: a UD QP's remote QPN (it travels
// in each work request), the send PSN of a side that never reached RTS. A side
// that never attempted RTR has its plan derived as qpconnect would.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/observe/observed.h"
#include "qpconnect/observe/pairing.h"

namespace qpconnect::trace {

// A failed ibv_modify_qp and what likely caused it.
struct FailedTransition {
  size_t qp = 0;          // index into Observation::qps
  size_t transition = 0;  // index into its transitions
  // The mask against ibv_modify_qp(3)'s table and the values' ranges: "mask
  // lacks required DEST_QPN", or empty.
  std::string mask_problem;
  // What the errno usually means at this transition, or empty.
  std::string errno_hint;
  // The validator's findings (errors and warnings) on attributes this
  // transition sent, of this side or of the pair.
  std::vector<Finding> causes;
};

struct PairVerdict {
  ObservedPair pair;    // a = the local side, b = the remote side
  bool judged = false;  // false: a transport the validator does not know (XRC, raw)
  std::vector<Finding> findings;
  std::vector<std::string> notes;  // what was assumed, and why
  std::vector<FailedTransition> failures;
};

// A QP with no peer in the traces.
struct LoneVerdict {
  size_t qp = 0;
  std::string status;  // "dangling", "unpaired" or "ambiguous" (pairing.h)
  std::string detail;  // why, in words
  // Errors and warnings of the rules about this side alone (its own port,
  // GID table, ranges and timers).
  std::vector<Finding> findings;
  std::vector<FailedTransition> failures;
};

struct Verdict {
  std::vector<PairVerdict> pairs;
  std::vector<LoneVerdict> lone;
  size_t errors = 0;    // error findings plus failed transitions
  size_t warnings = 0;  // warning findings plus QPs without a peer
  size_t infos = 0;
};

// Pairs and judges every QP of `observation`.
Verdict JudgeObservation(const Observation& observation);

// "0x00001a"
std::string QpnText(uint32_t qpn);

}  // namespace qpconnect::trace
