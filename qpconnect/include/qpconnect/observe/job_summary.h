// SPDX-License-Identifier: MIT
// The verdict on a whole job for people: who is at fault and who waits on
// whom, grouped by host, process and rule, before any pair is listed
// ("pid 4411 (python) on node-37 is stopped: 36 QPs on 12 hosts wait on it").
// qp-validate prints it first (SummaryText), puts it in --json, and draws the
// host-by-host matrix from it (verdict_svg.h).
//
// A culprit is what a finding blames, by rule:
//   receiver-not-ready, process-stopped, qp-error-state, qp-not-connected,
//   psn-receiver-ahead   the judged QP's process (it does not receive, is
//                        stopped, failed, was never connected, expects PSNs
//                        not sent);
//   psn-sender-ahead, psn-stalled, rqpn-dangling
//                        the judged QP's process (its sends are not taken);
//   peer-qp-gone         the gone QP's process when it was observed, else the
//                        host the waiting QP's destination address names
//                        ("QPs on node-73 that no longer exist"), else "a
//                        peer in no input".
// The waiting QPs are the findings' other sides. Notes (unchecked) are not
// culprits. Ambiguous QPs (pairing.h) are counted, never blamed.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/observe/judge.h"

namespace qpconnect {

struct JobCulprit {
  std::string host;  // "" when unknown
  int pid = 0;       // 0 when the process is unknown (a QP in no input)
  std::string comm;
  std::string rule;  // the finding id ("receiver-not-ready")
  std::string what;  // "is stopped", "is gone (its QPs no longer exist)", ...
  Severity severity = Severity::kError;
  size_t culprit_qps = 0;  // QPs of the culprit the findings name
  size_t waiting_qps = 0;  // distinct QPs waiting on it
  size_t waiting_hosts = 0;
  std::string line;  // the sentence, as SummaryText prints it
};

struct JobSummary {
  size_t hosts = 0;  // distinct host names among the QPs
  size_t qps = 0;
  size_t pairs = 0;
  size_t sound_pairs = 0;
  size_t ambiguous = 0;  // QPs pairing could not tell a peer for (not judged)
  size_t dangling = 0;
  size_t errors = 0;
  size_t warnings = 0;
  size_t infos = 0;
  // Most waiting QPs first, then by host, pid, rule.
  std::vector<JobCulprit> culprits;
  // (rule id, findings that are errors or warnings), most first.
  std::vector<std::pair<std::string, size_t>> by_rule;
  // (host, unsound pairs or findings touching a QP on it), most first.
  std::vector<std::pair<std::string, size_t>> by_host;
  // Hosts of the culprits, in culprits' order, once each: what the matrix
  // highlights.
  std::vector<std::string> stuck_hosts;
};

// Groups the verdict's live findings by culprit, rule and host.
JobSummary SummarizeJob(const Observation& observation, const ObservationVerdict& verdict);

// The summary as text: a headline, one line per culprit (up to
// `max_culprits`, then a count), the rules and the hosts most involved.
std::string SummaryText(const JobSummary& summary, size_t max_culprits = 20);

}  // namespace qpconnect
