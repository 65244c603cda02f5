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

#include "qpconnect/observe/job_hosts.h"
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

// The lines on the job's host list: the hosts that sent no snapshot (up to
// `max` named), the QPs pointing at them, the hosts not listed.
std::string MissingHostsText(const JobSummary& s, size_t max) {
  std::string out;
  auto names = [max](const std::vector<std::string>& list) {
    std::string text;
    for (size_t i = 0; i < list.size() && i < max; ++i) text += (i == 0 ? "" : ", ") + list[i];
    if (list.size() > max) text += " and " + std::to_string(list.size() - max) + " more";
    return text;
  };
  if (s.missing_hosts.size() == 1) {
    out += "  error: " + s.missing_hosts[0].line + "\n";
  } else if (!s.missing_hosts.empty()) {
    std::vector<std::string> missing;
    for (const JobMissingHost& m : s.missing_hosts) missing.push_back(m.host);
    out += "  error: " + std::to_string(missing.size()) + " of the " +
           std::to_string(s.listed_hosts) + " listed hosts sent no snapshot: " + names(missing) +
           "\n";
    if (s.unplaced_qps != 0) {
      out += "  error: " + Plural(s.unplaced_qps, "QP", "QPs") + " on " +
             Plural(s.unplaced_hosts, "host", "hosts") +
             (s.unplaced_qps == 1 ? " points" : " point") + " at one of the " +
             std::to_string(missing.size()) +
             " hosts that sent nothing (no QP in the inputs answers to their rqpn)\n";
    }
  }
  if (!s.unlisted_hosts.empty()) {
    out += "  note: " + Plural(s.unlisted_hosts.size(), "host", "hosts") +
           (s.unlisted_hosts.size() == 1 ? " sent a snapshot but is" : " sent snapshots but are") +
           " not in the job's host list (do the names differ? qp-inspect --host NAME): " +
           names(s.unlisted_hosts) + "\n";
  }
  return out;
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
  s.errors = v.errors;  // and the missing hosts, below
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

  // Every host accounted for: the listed hosts no input names, and the QPs
  // pointing at them (no QP in the inputs answers to their rqpn, and their
  // destination names no observed port).
  std::unordered_set<size_t> pointing;
  std::string missing_one;  // the missing host, when it is the only one
  if (!obs.expected_hosts.empty()) {
    std::vector<std::string> names, observed;
    for (const ObservedHost& h : obs.hosts) names.push_back(h.name);
    std::vector<std::string> of_qps(hosts.begin(), hosts.end());  // traces' and dumps' too
    std::sort(of_qps.begin(), of_qps.end());
    names.insert(names.end(), of_qps.begin(), of_qps.end());
    AddHostNames(names, &observed);
    s.listed_hosts = obs.expected_hosts.size();
    for (std::string& h : HostsNotIn(obs.expected_hosts, observed)) {
      s.missing_hosts.push_back({std::move(h), 0, 0, ""});
    }
    s.unlisted_hosts = HostsNotIn(observed, obs.expected_hosts);
    s.unlisted_hosts.erase(std::remove(s.unlisted_hosts.begin(), s.unlisted_hosts.end(), ""),
                           s.unlisted_hosts.end());
    std::set<std::string_view> pointing_hosts;
    for (size_t i : v.pairing.dangling) {
      const ObservedQp& q = obs.qps[i];
      if (q.pid == 0 && !q.comm.empty()) continue;  // the kernel's own QPs
      if (!named_host(q).empty()) continue;         // its address names an observed port
      // No QP answers to its rqpn: none has that number, or the one that has
      // it is alive and names another peer (RC peers name each other). A
      // destroyed one, or one never connected, may be its peer.
      if (std::optional<size_t> t = v.pairing.NamedBy(i)) {
        const ObservedQp& y = obs.qps[*t];
        if (y.destroyed || !y.dest_qpn || *y.dest_qpn == q.qpn) continue;
      }
      pointing.insert(i);
      pointing_hosts.insert(q.host);
    }
    if (s.missing_hosts.size() == 1) {
      JobMissingHost& m = s.missing_hosts[0];
      missing_one = m.host;
      m.pointing_qps = pointing.size();
      m.pointing_hosts = pointing_hosts.size();
      m.line = m.host + " sent no snapshot";
      m.line +=
          m.pointing_qps == 0
              ? " (no QP in the inputs points at it)"
              : ": " + Plural(m.pointing_qps, "QP", "QPs") + " on " +
                    Plural(m.pointing_hosts, "host", "hosts") +
                    (m.pointing_qps == 1 ? " points" : " point") +
                    " at it (by elimination: no QP in the inputs answers to their rqpn, and " +
                    m.host + " is the one listed host that sent nothing)";
    } else if (s.missing_hosts.size() > 1) {
      s.unplaced_qps = pointing.size();
      s.unplaced_hosts = pointing_hosts.size();
      for (JobMissingHost& m : s.missing_hosts) m.line = m.host + " sent no snapshot";
    }
    s.errors += s.missing_hosts.size();
  }

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

    // A QP that seems to aim at a peer connected elsewhere, where the one
    // host missing holds its peer: counted in that host's line instead.
    if (rule == "rqpn-dangling" && !missing_one.empty() && pointing.count(f.qp) != 0) continue;

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
      // A peer in no input, on the one host that sent no snapshot: whether
      // its QPs exist is not known, only that they do not answer.
      if (c.host.empty() && !missing_one.empty() && pointing.count(f.qp) != 0) {
        c.host = missing_one;
        c.what = "do not answer";
      }
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
      c.line =
          "QPs on " + c.host + " " + c.what + ": " + waits + "them (" +
          (c.host == missing_one ? c.host + " sent no snapshot: named by elimination"
           : g.by_elimination ? std::string("named by elimination: the only host given without QPs "
                                            "numbered as they name")
                              : std::string("named by their address")) +
          ")";
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
  out += MissingHostsText(s, max_culprits);
  if (s.culprits.empty() && s.missing_hosts.empty()) {
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
