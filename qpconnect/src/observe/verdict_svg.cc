// SPDX-License-Identifier: MIT
// VerdictMatrixSvg(): the host-by-host matrix (verdict_svg.h).
#include "qpconnect/observe/verdict_svg.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <vector>

namespace qpconnect {
namespace {

// Cell states, worst last.
enum Cell : uint8_t { kNone = 0, kSound = 1, kWarning = 2, kError = 3 };

const char* Color(uint8_t c) {
  switch (c) {
    case kSound:
      return "#5cb85c";
    case kWarning:
      return "#f0ad4e";
    case kError:
      return "#d9302c";
    default:
      return "none";
  }
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string VerdictMatrixSvg(const Observation& obs, const ObservationVerdict& v,
                             const JobSummary& summary) {
  std::vector<std::string> hosts;
  for (const ObservedQp& q : obs.qps) hosts.push_back(q.host);
  for (const ObservedHost& h : obs.hosts) hosts.push_back(h.name);
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  const size_t n = hosts.size();
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) index.emplace(hosts[i], i);

  // The worst severity each QP is named with.
  std::unordered_map<size_t, uint8_t> worst;
  for (const LiveFinding& f : v.live.findings) {
    if (f.finding.unchecked || f.finding.severity == Severity::kInfo) continue;
    const uint8_t c = f.finding.severity == Severity::kError ? kError : kWarning;
    worst[f.qp] = std::max(worst[f.qp], c);
  }
  std::vector<uint8_t> cells(n * n, kNone);
  auto mark = [&](const std::string& a, const std::string& b, uint8_t c) {
    const size_t r = index.at(a);
    const size_t k = index.at(b);
    cells[r * n + k] = std::max(cells[r * n + k], c);
    cells[k * n + r] = std::max(cells[k * n + r], c);
  };
  for (const LivePairVerdict& p : v.live.pairs) {
    uint8_t c = kSound;
    if (!p.sound) {
      auto wa = worst.find(p.pair.a);
      auto wb = worst.find(p.pair.b);
      c = std::max({uint8_t{kWarning}, wa == worst.end() ? uint8_t{kNone} : wa->second,
                    wb == worst.end() ? uint8_t{kNone} : wb->second});
    }
    mark(obs.qps[p.pair.a].host, obs.qps[p.pair.b].host, c);
  }
  if (v.offline.present) {
    for (const trace::PairVerdict& p : v.offline.verdict.pairs) {
      const bool bad = CountSeverity(p.findings, Severity::kError) + p.failures.size() != 0;
      mark(v.offline.obs.qps[p.pair.a].host, v.offline.obs.qps[p.pair.b].host,
           bad ? kError : kSound);
    }
  }
  // Findings outside a pair: toward the peer, or the host its address names.
  std::unordered_map<std::string, std::string> host_of_gid;
  for (const ObservedHost& h : obs.hosts) {
    for (const PortIdentity& p : h.ports) {
      for (const Gid& g : p.gids) host_of_gid.emplace(GidToString(g), h.name);
    }
  }
  for (const LiveFinding& f : v.live.findings) {
    if (f.finding.unchecked || f.finding.severity == Severity::kInfo) continue;
    const uint8_t c = f.finding.severity == Severity::kError ? kError : kWarning;
    const ObservedQp& q = obs.qps[f.qp];
    if (f.peer) {
      mark(q.host, obs.qps[*f.peer].host, c);
    } else if (q.dest_gid) {
      auto it = host_of_gid.find(GidToString(*q.dest_gid));
      if (it != host_of_gid.end()) mark(q.host, it->second, c);
    }
  }

  const bool labels = n <= 120;
  const double cell =
      std::max(1.0, std::min(16.0, 960.0 / static_cast<double>(std::max<size_t>(n, 1))));
  const double left = 130;
  const double top = labels ? 150 : 80;
  const double size = cell * static_cast<double>(n);
  const double width = left + size + 30;
  const double height = top + size + 70;
  std::vector<bool> stuck(n, false);
  for (const std::string& h : summary.stuck_hosts) {
    auto it = index.find(h);
    if (it != index.end()) stuck[it->second] = true;
  }

  std::string out;
  out.reserve(4096 + n * 64);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) + "\" height=\"" +
         Num(height) + "\" viewBox=\"0 0 " + Num(width) + " " + Num(height) +
         "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  const std::string title = "qp-validate: " + std::to_string(n) + " hosts, " +
                            std::to_string(summary.pairs) + " pairs (" +
                            std::to_string(summary.sound_pairs) + " sound, " +
                            std::to_string(summary.pairs - summary.sound_pairs) + " not sound)";
  out += "<title>" + Escape(title) + "</title>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + Num(width) + "\" height=\"" + Num(height) +
         "\" fill=\"white\"/>\n";
  out += "<text x=\"10\" y=\"20\" font-size=\"14\">" + Escape(title) + "</text>\n";
  std::string stuck_text = "stuck: ";
  for (size_t i = 0; i < summary.stuck_hosts.size() && i < 8; ++i) {
    stuck_text += (i ? ", " : "") + summary.stuck_hosts[i];
  }
  if (summary.stuck_hosts.empty()) stuck_text = "no host is at fault";
  out += "<text x=\"10\" y=\"38\" fill=\"#d9302c\">" + Escape(stuck_text) + "</text>\n";
  out += "<rect x=\"" + Num(left) + "\" y=\"" + Num(top) + "\" width=\"" + Num(size) +
         "\" height=\"" + Num(size) +
         "\" fill=\"#f4f4f4\" stroke=\"#999\" stroke-width=\"0.5\"/>\n";
  // The culprits' rows and columns, under the cells.
  out += "<g id=\"stuck\" fill=\"#ffe066\" fill-opacity=\"0.6\">\n";
  for (size_t i = 0; i < n; ++i) {
    if (!stuck[i]) continue;
    const double at = static_cast<double>(i) * cell;
    out += "<rect class=\"stuck-row\" data-host=\"" + Escape(hosts[i]) + "\" x=\"" + Num(left) +
           "\" y=\"" + Num(top + at) + "\" width=\"" + Num(size) + "\" height=\"" + Num(cell) +
           "\"/>\n";
    out += "<rect class=\"stuck-column\" data-host=\"" + Escape(hosts[i]) + "\" x=\"" +
           Num(left + at) + "\" y=\"" + Num(top) + "\" width=\"" + Num(cell) + "\" height=\"" +
           Num(size) + "\"/>\n";
  }
  out += "</g>\n<g id=\"cells\">\n";
  for (size_t r = 0; r < n; ++r) {
    for (size_t k = 0; k < n;) {
      const uint8_t c = cells[r * n + k];
      size_t run = 1;
      while (k + run < n && cells[r * n + k + run] == c) ++run;
      if (c != kNone) {
        out += "<rect x=\"" + Num(left + static_cast<double>(k) * cell) + "\" y=\"" +
               Num(top + static_cast<double>(r) * cell) + "\" width=\"" +
               Num(cell * static_cast<double>(run)) + "\" height=\"" + Num(cell) + "\" fill=\"" +
               Color(c) + "\"/>\n";
      }
      k += run;
    }
  }
  out += "</g>\n<g id=\"outline\" fill=\"none\" stroke=\"#d9302c\" stroke-width=\"1.5\">\n";
  for (size_t i = 0; i < n; ++i) {
    if (!stuck[i]) continue;
    const double at = static_cast<double>(i) * cell;
    out += "<rect x=\"" + Num(left) + "\" y=\"" + Num(top + at) + "\" width=\"" + Num(size) +
           "\" height=\"" + Num(cell) + "\"/>\n";
    out += "<rect x=\"" + Num(left + at) + "\" y=\"" + Num(top) + "\" width=\"" + Num(cell) +
           "\" height=\"" + Num(size) + "\"/>\n";
  }
  out += "</g>\n<g id=\"labels\">\n";
  for (size_t i = 0; i < n; ++i) {
    if (!labels && !stuck[i]) continue;
    const double mid = static_cast<double>(i) * cell + cell / 2;
    const std::string style = stuck[i] ? " fill=\"#d9302c\" font-weight=\"bold\"" : "";
    out += "<text x=\"" + Num(left - 4) + "\" y=\"" + Num(top + mid + 4) +
           "\" text-anchor=\"end\"" + style + ">" + Escape(hosts[i]) + "</text>\n";
    out += "<text transform=\"translate(" + Num(left + mid + 4) + "," + Num(top - 4) +
           ") rotate(-90)\"" + style + ">" + Escape(hosts[i]) + "</text>\n";
  }
  out += "</g>\n";
  const double ly = top + size + 25;
  double lx = left;
  for (const auto& [c, name] :
       {std::pair{kSound, "sound"}, std::pair{kWarning, "warning"}, std::pair{kError, "error"}}) {
    out += "<rect x=\"" + Num(lx) + "\" y=\"" + Num(ly - 10) +
           "\" width=\"12\" height=\"12\" fill=\"" + Color(c) + "\"/><text x=\"" + Num(lx + 16) +
           "\" y=\"" + Num(ly) + "\">" + name + "</text>\n";
    lx += 90;
  }
  out += "<rect x=\"" + Num(lx) + "\" y=\"" + Num(ly - 10) +
         "\" width=\"12\" height=\"12\" fill=\"#ffe066\" stroke=\"#d9302c\"/><text x=\"" +
         Num(lx + 16) + "\" y=\"" + Num(ly) + "\">a culprit's host (row and column)</text>\n";
  out += "<text x=\"" + Num(left) + "\" y=\"" + Num(ly + 20) +
         "\" fill=\"#666\">row and column: hosts in name order; a cell: the worst verdict among "
         "the pairs between them</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace qpconnect
