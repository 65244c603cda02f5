// SPDX-License-Identifier: MIT
// SummarizeJob(), SummaryText(): the verdict grouped by culprit (job_summary.h).
#include "qpconnect/observe/job_summary.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "qpconnect/observe/live_judge.h"

namespace qpconnect {
namespace {

std::string LastProcessState(const ObservedQp& q) {
  return q.samples.empty() ? std::string() : q.samples.back().process_state;
}

// What the culprit does wrong, by rule.
std::string What(const std::string& rule, const ObservedQp& culprit) {
  const std::string state = LastProcessState(culprit);
  if (rule == "receiver-not-ready" || rule == "process-stopped") {
    return IsStoppedState(state) ? "is " + ProcessStateWords(state) : "posts no receives";
  }
  if (rule == "qp-error-state") return "has QPs in ERR (a completion error ended them)";
  if (rule == "qp-not-connected") return "has QPs never moved to RTR";
  if (rule == "psn-receiver-ahead") return "expects PSNs its peers never sent (PSN mismatch)";
  if (rule == "psn-sender-ahead") return "sends PSNs its peers do not expect (PSN mismatch)";
  if (rule == "psn-stalled") return "sends packets that are never accepted";
  if (rule == "rqpn-dangling") return "aims QPs at peers connected elsewhere";
  if (rule == "peer-qp-gone") return "is gone (its QPs no longer exist)";
  return "is named by " + rule;
}

struct Group {
  JobCulprit c;
  std::set<size_t> culprit_qps;
  std::set<size_t> waiting;
  std::set<std::string> waiting_hosts;
  bool by_elimination = false;  // the host named by elimination (pairing.h)
};

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

JobSummary SummarizeJob(const Observation& obs, const ObservationVerdict& v) {
  JobSummary s;
  s.qps = obs.qps.size();
  std::unordered_set<std::string_view> hosts;
  const std::string* last = nullptr;  // QPs come host by host: skip repeats cheaply
  for (const ObservedQp& q : obs.qps) {
    if (last == nullptr || *last != q.host) hosts.insert(q.host);
    last = &q.host;
  }
  s.hosts = hosts.size();
  s.pairs = v.live.pairs.size();
  for (const LivePairVerdict& p : v.live.pairs) s.sound_pairs += p.sound ? 1 : 0;
  if (v.offline.present) {
    for (const trace::PairVerdict& p : v.offline.verdict.pairs) {
      ++s.pairs;
      s.sound_pairs += CountSeverity(p.findings, Severity::kError) + p.failures.size() == 0;
    }
  }
  s.ambiguous = v.pairing.ambiguous.size();
  s.dangling = v.pairing.dangling.size();
  s.errors = v.errors;
  s.warnings = v.warnings;
  s.infos = v.infos;

  // The host a destination GID or LID names, for peers in no input.
  std::unordered_map<std::string, std::string> host_of_gid;
  std::unordered_map<uint16_t, std::string> host_of_lid;
  for (const ObservedHost& h : obs.hosts) {
    for (const PortIdentity& p : h.ports) {
      for (const Gid& g : p.gids) host_of_gid.emplace(GidToString(g), h.name);
      if (p.lid != 0) host_of_lid.emplace(p.lid, h.name);
    }
  }
  auto named_host = [&](const ObservedQp& q) -> std::string {
    if (q.dest_gid) {
      auto it = host_of_gid.find(GidToString(*q.dest_gid));
      if (it != host_of_gid.end()) return it->second;
    }
    if (q.dest_lid) {
      auto it = host_of_lid.find(*q.dest_lid);
      if (it != host_of_lid.end()) return it->second;
    }
    return "";
  };

  std::map<std::tuple<std::string, int, std::string, std::string>, Group> groups;
  std::map<std::string, size_t> by_rule;
  std::map<std::string, size_t> by_host;
  for (const LiveFinding& f : v.live.findings) {
    if (f.finding.severity == Severity::kInfo || f.finding.unchecked) continue;
    const std::string& rule = f.finding.id;
    ++by_rule[rule];
    const ObservedQp& q = obs.qps[f.qp];
    ++by_host[q.host];
    if (f.peer && obs.qps[*f.peer].host != q.host) ++by_host[obs.qps[*f.peer].host];

    JobCulprit c;
    c.rule = rule;
    c.severity = f.finding.severity;
    std::optional<size_t> culprit = f.qp;
    std::optional<size_t> waiting = f.peer;
    if (rule == "peer-qp-gone") {
      culprit = f.peer;
      waiting = f.qp;
    }
    if (culprit) {
      const ObservedQp& cq = obs.qps[*culprit];
      c.host = cq.host;
      c.pid = cq.pid;
      c.comm = cq.comm;
      c.what = What(rule, cq);
    } else {
      c.host = named_host(q);
      c.what = "no longer exist (killed or exited)";
    }
    const EliminatedQp* eliminated = v.pairing.Eliminated(f.qp);
    const bool by_elimination = !culprit && c.host.empty() && eliminated != nullptr;
    if (by_elimination) c.host = eliminated->host;
    Group& g = groups[{c.host, c.pid, c.what, rule}];
    if (g.c.rule.empty()) {
      g.c = c;
      g.by_elimination = by_elimination;
    }
    if (culprit) g.culprit_qps.insert(*culprit);
    if (waiting) {
      g.waiting.insert(*waiting);
      g.waiting_hosts.insert(obs.qps[*waiting].host);
    }
  }
  for (auto& [key, g] : groups) {
    JobCulprit c = g.c;
    c.culprit_qps = g.culprit_qps.size();
    c.waiting_qps = g.waiting.size();
    c.waiting_hosts = g.waiting_hosts.size();
    const std::string waits = Plural(c.waiting_qps, "QP", "QPs") + " on " +
                              Plural(c.waiting_hosts, "host", "hosts") +
                              (c.waiting_qps == 1 ? " waits on " : " wait on ");
    if (c.pid != 0) {
      c.line = "pid " + std::to_string(c.pid) + " (" + c.comm + ") on " +
               (c.host.empty() ? "?" : c.host) + " " + c.what + ": " + waits + "it";
    } else if (c.culprit_qps != 0) {
      c.line = (c.comm.empty() ? "a kernel QP" : c.comm) + " on " + c.host + " " + c.what + ": " +
               waits + "it";
    } else if (!c.host.empty()) {
      c.line = "QPs on " + c.host + " " + c.what + ": " + waits +
               (g.by_elimination ? "them (named by elimination: the only host given without "
                                   "QPs numbered as they name)"
                                 : "them (named by their address)");
    } else if (g.by_elimination) {
      c.line =
          "peers gone or connected elsewhere (every QP numbered as they name is paired "
          "elsewhere): " +
          waits + "them";
    } else {
      c.line = "peers in no input: " + waits + "them";
    }
    c.line += " [" + c.rule + "]";
    s.culprits.push_back(std::move(c));
  }
  std::stable_sort(
      s.culprits.begin(), s.culprits.end(), [](const JobCulprit& a, const JobCulprit& b) {
        return std::tie(b.severity, b.waiting_qps) < std::tie(a.severity, a.waiting_qps);
      });
  for (const JobCulprit& c : s.culprits) {
    if (!c.host.empty() &&
        std::find(s.stuck_hosts.begin(), s.stuck_hosts.end(), c.host) == s.stuck_hosts.end()) {
      s.stuck_hosts.push_back(c.host);
    }
  }
  auto sorted = [](const std::map<std::string, size_t>& m) {
    std::vector<std::pair<std::string, size_t>> out(m.begin(), m.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
  };
  s.by_rule = sorted(by_rule);
  s.by_host = sorted(by_host);
  return s;
}

std::string SummaryText(const JobSummary& s, size_t max_culprits) {
  std::string out = "verdict: " + Plural(s.hosts, "host", "hosts") + ", " +
                    Plural(s.qps, "QP", "QPs") + ", " + Plural(s.pairs, "pair", "pairs") + " (" +
                    std::to_string(s.sound_pairs) + " sound, " +
                    std::to_string(s.pairs - s.sound_pairs) + " not sound)";
  if (s.ambiguous != 0) {
    out += ", " + Plural(s.ambiguous, "QP", "QPs") + " ambiguous (not judged)";
  }
  out += "; " + Plural(s.errors, "error", "errors") + ", " +
         Plural(s.warnings, "warning", "warnings") + "\n";
  if (s.culprits.empty()) {
    out += s.errors + s.warnings == 0 ? "  no process or host is at fault\n"
                                      : "  (the validator's findings on traces and dumps below)\n";
  }
  for (size_t i = 0; i < s.culprits.size() && i < max_culprits; ++i) {
    out +=
        "  " + std::string(SeverityName(s.culprits[i].severity)) + ": " + s.culprits[i].line + "\n";
  }
  if (s.culprits.size() > max_culprits) {
    out += "  ... and " + std::to_string(s.culprits.size() - max_culprits) + " more culprits\n";
  }
  if (!s.by_rule.empty()) {
    out += "  by rule:";
    for (const auto& [rule, n] : s.by_rule) out += " " + rule + " " + std::to_string(n) + ",";
    out.back() = '\n';
  }
  if (!s.by_host.empty()) {
    out += "  by host (findings naming its QPs):";
    for (size_t i = 0; i < s.by_host.size() && i < 10; ++i) {
      out += " " + s.by_host[i].first + " " + std::to_string(s.by_host[i].second) + ",";
    }
    out.back() = '\n';
    if (s.by_host.size() > 10) {
      out += "    ... and " + std::to_string(s.by_host.size() - 10) + " more hosts\n";
    }
  }
  if (s.ambiguous != 0) {
    out += "  " + Plural(s.ambiguous, "QP is", "QPs are") +
           " ambiguous: several QPs fit its QP number and no address, PSN or job told them "
           "apart, so it is not judged (a snapshot with destination addresses settles it)\n";
  }
  return out;
}

}  // namespace qpconnect
