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
// Every host accounted for: a host of the job's host list
// (Observation::expected_hosts, job_hosts.h) that no input names sent no
// snapshot, an error of the job, named first. The QPs pointing at it are
// those whose rqpn names a QP in no input (pairing.h's dangling QPs that
// name no QP) and whose destination address, where known, names no observed
// port: they are the missing host's peers when it is the only host missing
// (by elimination), else they point at one of the hosts missing. A
// peer-qp-gone finding on such a QP then blames the missing host.
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

// A host of the job's host list that sent no snapshot.
struct JobMissingHost {
  std::string host;
  // The QPs pointing at it and the hosts they are on: set when it is the
  // only host missing (by elimination); 0 with several (see JobSummary).
  size_t pointing_qps = 0;
  size_t pointing_hosts = 0;
  // "node-b sent no snapshot: 6 QPs on 1 host point at it (by elimination:
  // ...)"
  std::string line;
};

struct JobSummary {
  size_t hosts = 0;  // distinct host names among the QPs
  // Every host accounted for: the job's host list's length (0 when none was
  // given), its hosts no input names, in its order, and the QPs pointing at
  // one of them when several are missing (which one is not known).
  size_t listed_hosts = 0;
  std::vector<JobMissingHost> missing_hosts;
  size_t unplaced_qps = 0;
  size_t unplaced_hosts = 0;
  // Hosts that sent snapshots but are not in the list (names that differ?).
  std::vector<std::string> unlisted_hosts;
  size_t qps = 0;
  size_t pairs = 0;
  size_t sound_pairs = 0;
  size_t ambiguous = 0;  // QPs pairing could not tell a peer for (not judged)
  size_t dangling = 0;
  size_t errors = 0;  // the judge's, and one per missing host
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

// The summary as text: a headline, the hosts that sent no snapshot, one
// line per culprit (up to `max_culprits`, then a count), the rules and the
// hosts most involved.
std::string SummaryText(const JobSummary& summary, size_t max_culprits = 20);

}  // namespace qpconnect
