// SPDX-License-Identifier: MIT
#include "qpconnect/observe/judge.h"

#include <vector>

namespace qpconnect {
namespace {

// The QPs and pairs that are no snapshot's: judged by the validator's rules
// as the trace judge judges traces.
OfflineJudgement JudgeOffline(const Observation& obs, const Pairing& pairing) {
  OfflineJudgement part;
  std::vector<bool> live(obs.qps.size(), false);
  for (size_t i = 0; i < obs.qps.size(); ++i) {
    live[i] = obs.qps[i].source == ObservedSource::kSnapshot;
  }
  for (const ObservedPair& p : pairing.pairs) {
    if (live[p.a] || live[p.b]) live[p.a] = live[p.b] = true;  // judged live
  }
  for (size_t i = 0; i < obs.qps.size(); ++i) {
    if (!live[i]) part.obs.qps.push_back(obs.qps[i]);
  }
  if (part.obs.qps.empty()) return part;
  part.present = true;
  part.verdict = trace::JudgeObservation(part.obs);
  return part;
}

}  // namespace

ObservationVerdict JudgeObserved(const Observation& observation) {
  ObservationVerdict v;
  v.pairing = PairObservedQps(observation);
  v.live = JudgeLive(observation, v.pairing);
  v.offline = JudgeOffline(observation, v.pairing);
  std::vector<Finding> live_findings;
  for (const LiveFinding& f : v.live.findings) live_findings.push_back(f.finding);
  v.errors = CountSeverity(live_findings, Severity::kError);
  v.warnings = CountSeverity(live_findings, Severity::kWarning);
  v.infos = CountSeverity(live_findings, Severity::kInfo);
  if (v.offline.present) {
    v.errors += v.offline.verdict.errors;
    v.warnings += v.offline.verdict.warnings;
    v.infos += v.offline.verdict.infos;
  }
  return v;
}

}  // namespace qpconnect
