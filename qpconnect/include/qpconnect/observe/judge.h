// SPDX-License-Identifier: MIT
// Both judges over one observation (observed.h), whatever its sources: every
// pair with a side from a kernel snapshot by the live judge (live_judge.h:
// what the kernel shows of the QPs while they run), every other QP, traced or
// dumped, by the trace judge (trace_judge.h: the validator's rules on what the
// programs applied). qp-validate's snapshot mode prints what this returns.
//
// Thread-safety: pure function.
#pragma once

#include <cstddef>

#include "qpconnect/observe/live_judge.h"
#include "qpconnect/observe/observed.h"
#include "qpconnect/observe/pairing.h"
#include "qpconnect/observe/trace_judge.h"

namespace qpconnect {

// The QPs that no pair with a snapshot side covers (traces and dumps, paired
// among themselves), judged by the trace judge. Its indexes are into obs.qps.
struct OfflineJudgement {
  Observation obs;  // those QPs, in their order in the whole observation
  trace::Verdict verdict;
  bool present = false;  // false: every QP was judged live (obs is empty)
};

struct ObservationVerdict {
  Pairing pairing;  // of the whole observation
  LiveReport live;  // the live judge on `pairing`
  OfflineJudgement offline;
  // Both judges' counts together: findings by severity, plus (trace judge)
  // failed transitions as errors and QPs without a peer as warnings.
  size_t errors = 0;
  size_t warnings = 0;
  size_t infos = 0;
};

// Pairs `observation` and judges it with both judges.
ObservationVerdict JudgeObserved(const Observation& observation);

}  // namespace qpconnect
