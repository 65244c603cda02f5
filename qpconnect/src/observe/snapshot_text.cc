// SPDX-License-Identifier: MIT
#include "qpconnect/observe/snapshot_text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

namespace qpconnect {
namespace {

std::string Opt(const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : "-"; }

std::string Delta(const std::optional<uint32_t>& before, const std::optional<uint32_t>& after) {
  if (!before || !after) return "-";
  return "+" + std::to_string((*after - *before) & 0xffffffu);
}

using QpKey = std::tuple<std::string, uint32_t, int>;

QpKey KeyOf(const KernelQp& q) { return {q.device, q.lqpn, q.pid}; }

// Columns padded to their widest cell; the last column is not padded.
std::string Table(const std::vector<std::vector<std::string>>& rows,
                  const std::vector<bool>& right_aligned) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()), 0);
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      const bool last = c + 1 == r.size();
      const std::string pad(width[c] - r[c].size(), ' ');
      const bool right = c < right_aligned.size() && right_aligned[c];
      line += right ? pad + r[c] : (last ? r[c] : r[c] + pad);
      if (!last) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string ProcessStateText(const std::string& state) {
  if (state.empty()) return "-";
  if (state == "T") return "T (stopped)";
  if (state == "t") return "t (traced, stopped)";
  if (state == "Z") return "Z (zombie)";
  if (state == "D") return "D (disk sleep)";
  return state;
}

std::string FormatSnapshotText(const Snapshot& snapshot) {
  std::string out;
  if (snapshot.samples.empty()) return "no sample\n";
  const KernelSample& last = snapshot.samples.back();
  const KernelSample& first = snapshot.samples.front();
  const bool two = snapshot.samples.size() >= 2;
  const double interval = SnapshotInterval(snapshot);

  std::map<QpKey, const KernelQp*> before;
  if (two) {
    for (const KernelQp& q : first.qps) before.emplace(KeyOf(q), &q);
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"DEVICE", "PORT",   "LQPN", "RQPN",    "TYPE",   "STATE",
                                     "SQ-PSN", "RQ-PSN", "PID",  "COMMAND", "PROCESS"};
  std::vector<bool> right = {false, true, true, true, false, false, true, true, true, false, false};
  if (two) {
    header.insert(header.begin() + 8, {"+SQ", "+RQ"});
    right.insert(right.begin() + 8, {true, true});
  }
  rows.push_back(header);
  auto row_of = [&](const KernelQp& q, const KernelQp* earlier, const std::string& state) {
    std::vector<std::string> r = {q.device,
                                  q.port != 0 ? std::to_string(q.port) : "-",
                                  std::to_string(q.lqpn),
                                  q.type == "RC" || q.type == "UC" ? Opt(q.rqpn) : "-",
                                  q.type,
                                  state,
                                  Opt(q.sq_psn),
                                  q.type == "RC" || q.type == "UC" ? Opt(q.rq_psn) : "-",
                                  q.pid != 0 ? std::to_string(q.pid) : "-",
                                  q.pid != 0 ? q.comm : "[" + q.comm + "]",
                                  ProcessStateText(q.process_state)};
    if (q.comm.empty()) r[9] = "?";  // /proc hid the process, or the kernel hid its pid
    if (two) {
      const bool rq = q.type == "RC" || q.type == "UC";
      r.insert(r.begin() + 8, {earlier ? Delta(earlier->sq_psn, q.sq_psn) : "new",
                               earlier && rq ? Delta(earlier->rq_psn, q.rq_psn) : "-"});
    }
    return r;
  };
  std::map<QpKey, bool> in_last;
  for (const KernelQp& q : last.qps) {
    in_last[KeyOf(q)] = true;
    auto it = before.find(KeyOf(q));
    rows.push_back(row_of(q, it == before.end() ? nullptr : it->second, q.state));
  }
  size_t gone = 0;
  if (two) {
    for (const KernelQp& q : first.qps) {
      if (in_last.count(KeyOf(q)) != 0) continue;
      ++gone;
      std::vector<std::string> r = row_of(q, nullptr, "(gone)");
      r[8] = "-";
      rows.push_back(std::move(r));
    }
  }

  char head[160];
  std::snprintf(head, sizeof head, "%zu QP%s", last.qps.size(), last.qps.size() == 1 ? "" : "s");
  out += "host " + (snapshot.host.empty() ? std::string("?") : snapshot.host);
  if (!snapshot.taken_at.empty()) out += ", " + snapshot.taken_at;
  out += ": " + std::string(head);
  if (two) {
    char span[64];
    std::snprintf(span, sizeof span, "; 2 samples %.1f s apart", interval);
    out += span;
    if (gone != 0) out += " (" + std::to_string(gone) + " gone meanwhile)";
  }
  out += "\n\n" + Table(rows, right);

  // Counters: non-zero ones, with their rise when two samples were taken.
  std::map<std::pair<std::string, uint8_t>, const KernelPortCounters*> first_ports;
  if (two) {
    for (const KernelPortCounters& p : first.ports) first_ports[{p.device, p.port}] = &p;
  }
  bool any = false;
  for (const KernelPortCounters& p : last.ports) {
    std::string line;
    const KernelPortCounters* e = two ? first_ports[{p.device, p.port}] : nullptr;
    for (const auto& [name, value] : p.counters) {
      if (value == 0) continue;
      line += (line.empty() ? "" : ", ") + name + " " + std::to_string(value);
      if (e == nullptr) continue;
      for (const auto& [n0, v0] : e->counters) {
        if (n0 == name && value > v0) line += " (+" + std::to_string(value - v0) + ")";
      }
    }
    if (!any) {
      out += "\nport counters (per port, not per QP; non-zero values";
      out += two ? ", rise since the first sample in parentheses):\n" : "):\n";
      any = true;
    }
    out += "  " + p.device + " port " + std::to_string(p.port) + ": " +
           (line.empty() ? "all zero" : line) + "\n";
  }
  for (const std::string& n : snapshot.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace qpconnect
