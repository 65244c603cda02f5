// SPDX-License-Identifier: MIT
#include "snapshot_mode.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "exit_codes.h"
#include "findings_json.h"
#include "findings_text.h"
#include "json_document.h"
#include "json_text.h"
#include "observed_json.h"
#include "progress.h"
#include "qpconnect/observe/dump.h"
#include "qpconnect/observe/job_hosts.h"
#include "qpconnect/observe/job_summary.h"
#include "qpconnect/observe/judge.h"
#include "qpconnect/observe/snapshot_json.h"
#include "qpconnect/observe/trace_reader.h"
#include "qpconnect/observe/verdict_svg.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/validate.h"

namespace qpconnect::tools::qp_validate {
namespace {

using Json = nlohmann::ordered_json;

// How much of a named file decides whether it is a snapshot, and holds the
// QP count a snapshot declares.
constexpr size_t kSnapshotHeadBytes = 512;

// One input file and what it held.
struct Input {
  std::string name;
  std::string kind;  // "snapshot", "trace", "dump"
  std::string what;  // one line: "host lab, 2 samples 1.0 s apart, 4 QPs, 2 ports"
  size_t qps = 0;
};

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// A live finding as compact JSON text: the finding's members
// (findings_json.h), then the QP, its peer and the evidence.
void AppendLiveFindingJson(const Observation& obs, const LiveFinding& f, std::string* out) {
  std::string finding = FindingToJson(f.finding).dump();
  finding.pop_back();  // its closing brace: the members below follow
  *out += finding;
  *out += ",\"qp\":";
  AppendObservedQpJson(obs.qps[f.qp], out);
  *out += ",\"peer\":";
  if (f.peer) {
    AppendObservedQpJson(obs.qps[*f.peer], out);
  } else {
    *out += "null";
  }
  *out += ",\"evidence\":";
  *out += Json(f.evidence).dump();
  out->push_back('}');
}

std::string QpLine(const ObservedQp& q, bool with_host) {
  std::string s = DescribeObservedQp(q, with_host) + " " +
                  (q.type_name.empty() ? "?" : q.type_name) + " " +
                  (q.destroyed ? "gone" : (q.state.empty() ? "state unknown" : q.state));
  if (!q.samples.empty() && !q.destroyed) {
    const ObservedSample& last = q.samples.back();
    if (last.sq_psn) s += ", sq_psn " + std::to_string(*last.sq_psn);
    if (last.rq_psn && q.dest_qpn) s += ", rq_psn " + std::to_string(*last.rq_psn);
    if (!last.process_state.empty()) s += ", process " + last.process_state;
  }
  if (q.dest_qpn) s += ", rqpn " + std::to_string(*q.dest_qpn);
  s += " [" + std::string(ObservedSourceName(q.source)) + " " + q.origin + "]";
  return s;
}

void PrintLiveFinding(std::ostream& out, const Observation& obs, const LiveFinding& f,
                      const std::string& indent) {
  std::string sev = SeverityName(f.finding.severity);
  sev.resize(8, ' ');
  out << indent << sev << f.finding.id << "  " << f.finding.attribute << "\n";
  const std::string pad = indent + "        ";
  out << pad << f.finding.message << "\n";
  const ObservedQp& q = obs.qps[f.qp];
  if (!f.finding.local_value.empty()) {
    out << pad << q.device << " QP " << q.qpn << ": " << f.finding.local_value;
    if (f.peer && !f.finding.remote_value.empty()) {
      const ObservedQp& p = obs.qps[*f.peer];
      out << "   " << p.device << " QP " << p.qpn << ": " << f.finding.remote_value;
    }
    out << "\n";
  }
  for (const std::string& e : f.evidence) out << pad << "evidence: " << e << "\n";
  if (!f.finding.fix.empty()) out << pad << "fix: " << f.finding.fix << "\n";
}

// "mutual qpn + gid, unique" or "mutual qpn + psn continuity, best of 1000".
std::string HowText(const ObservedPair& p) {
  return p.how + (p.unique ? ", unique" : ", best of " + std::to_string(p.candidates));
}

void PrintText(std::ostream& out, const std::vector<Input>& inputs, const Observation& obs,
               const Pairing& pairing, const LiveReport& live, const OfflineJudgement& offline,
               size_t errors, size_t warnings, size_t infos, const JobSummary& summary) {
  const bool hosts = std::any_of(obs.qps.begin(), obs.qps.end(), [&](const ObservedQp& q) {
    return q.host != obs.qps.front().host;
  });
  out << SummaryText(summary) << "\n";
  out << "inputs:\n";
  constexpr size_t kInputsListed = 16;
  for (size_t i = 0; i < inputs.size() && i < kInputsListed; ++i) {
    out << "  " << inputs[i].name << ": " << inputs[i].kind << ", " << inputs[i].what << "\n";
  }
  if (inputs.size() > kInputsListed) {
    out << "  ... and " << inputs.size() - kInputsListed << " more\n";
  }
  constexpr size_t kNotesListed = 32;
  for (size_t i = 0; i < obs.notes.size() && i < kNotesListed; ++i) {
    out << "note: " << obs.notes[i] << "\n";
  }
  if (obs.notes.size() > kNotesListed) {
    out << "note: ... and " << obs.notes.size() - kNotesListed << " more notes\n";
  }
  const size_t all_pairs = live.pairs.size() + (offline.present ? offline.verdict.pairs.size() : 0);
  const bool list_sound = all_pairs <= kListAllPairs;
  size_t sound_unlisted = 0;

  std::unordered_map<size_t, std::vector<const LiveFinding*>> by_pair;  // pair -> findings
  std::unordered_map<size_t, size_t> pair_of;                           // QP -> pair index
  pair_of.reserve(live.pairs.size() * 2);
  for (size_t i = 0; i < live.pairs.size(); ++i) {
    pair_of[live.pairs[i].pair.a] = i;
    pair_of[live.pairs[i].pair.b] = i;
  }
  std::vector<const LiveFinding*> others;
  for (const LiveFinding& f : live.findings) {
    auto it = pair_of.find(f.qp);
    const bool in_pair = it != pair_of.end() && (!f.peer || pair_of.count(*f.peer) == 0 ||
                                                 pair_of.at(*f.peer) == it->second);
    if (in_pair && !f.finding.unchecked) {
      by_pair[it->second].push_back(&f);
    } else {
      others.push_back(&f);
    }
  }
  size_t shown = 0;
  for (size_t i = 0; i < live.pairs.size(); ++i) {
    const LivePairVerdict& v = live.pairs[i];
    if (v.progress.rfind("not judged live", 0) == 0) continue;  // offline below
    ++shown;
    if (v.sound && !list_sound) {
      ++sound_unlisted;
      continue;
    }
    out << "\npair " << shown << " (" << HowText(v.pair)
        << "): " << (v.sound ? "sound" : "NOT sound") << "\n";
    out << "  " << QpLine(obs.qps[v.pair.a], hosts) << "\n";
    out << "  " << QpLine(obs.qps[v.pair.b], hosts) << "\n";
    out << "  " << v.progress << "\n";
    for (const LiveFinding* f : by_pair[i]) PrintLiveFinding(out, obs, *f, "  ");
  }
  if (offline.present) {
    for (const trace::PairVerdict& p : offline.verdict.pairs) {
      ++shown;
      const size_t e = CountSeverity(p.findings, Severity::kError) + p.failures.size();
      if (e == 0 && !list_sound) {
        ++sound_unlisted;
        continue;
      }
      out << "\npair " << shown << " (" << p.pair.how
          << "; judged by the validator's rules): " << (e == 0 ? "sound" : "NOT sound") << "\n";
      out << "  " << QpLine(offline.obs.qps[p.pair.a], hosts) << "\n";
      out << "  " << QpLine(offline.obs.qps[p.pair.b], hosts) << "\n";
      for (const std::string& n : p.notes) out << "  note: " << n << "\n";
      for (const trace::FailedTransition& f : p.failures) {
        const ObservedTransition& t = offline.obs.qps[f.qp].transitions[f.transition];
        out << "  failed: QP " << offline.obs.qps[f.qp].qpn << " " << t.from << "->" << t.to
            << ", errno " << t.sys_errno << (f.errno_hint.empty() ? "" : ": " + f.errno_hint)
            << "\n";
      }
      PrintFindingsText(out, p.findings, "  ");
    }
  }
  if (sound_unlisted != 0) {
    out << "\n" << sound_unlisted << " sound pairs not listed (--json lists every pair)\n";
  }
  if (!others.empty()) {
    out << "\nQPs whose rqpn names no QP they are paired with:\n";
    for (const LiveFinding* f : others) PrintLiveFinding(out, obs, *f, "  ");
  }
  const size_t lone = pairing.dangling.size() + pairing.unpaired.size() + pairing.ambiguous.size();
  size_t lone_listed = 0;
  for (const auto& [list, status] :
       {std::pair{&pairing.unpaired, "unpaired"}, std::pair{&pairing.ambiguous, "ambiguous"}}) {
    for (size_t i : *list) {
      const ObservedQp& q = obs.qps[i];
      if (q.pid == 0 && !q.comm.empty()) continue;  // the kernel's own QPs (QP1)
      if (lone_listed++ == 0) out << "\nQPs without a peer:\n";
      if (lone_listed > 32) continue;
      out << "  " << status << ": " << QpLine(q, hosts) << "\n";
    }
  }
  if (lone_listed > 32) out << "  ... and " << lone_listed - 32 << " more\n";
  out << "\n"
      << shown << (shown == 1 ? " pair, " : " pairs, ") << lone << (lone == 1 ? " QP" : " QPs")
      << " without a peer (kernel QPs included); " << FindingCounts(errors, warnings, infos)
      << (errors != 0 ? ": these QPs do not talk.\n" : ": no errors.\n");
}

Json SummaryJson(const JobSummary& s) {
  Json culprits = Json::array();
  for (const JobCulprit& c : s.culprits) {
    culprits.push_back({{"host", c.host},
                        {"pid", c.pid},
                        {"comm", c.comm},
                        {"rule", c.rule},
                        {"severity", SeverityName(c.severity)},
                        {"what", c.what},
                        {"culprit_qps", c.culprit_qps},
                        {"waiting_qps", c.waiting_qps},
                        {"waiting_hosts", c.waiting_hosts},
                        {"text", c.line}});
  }
  Json by_rule = Json::array();
  for (const auto& [rule, n] : s.by_rule) by_rule.push_back({{"rule", rule}, {"findings", n}});
  Json by_host = Json::array();
  for (const auto& [host, n] : s.by_host) by_host.push_back({{"host", host}, {"findings", n}});
  Json missing = Json::array();
  for (const JobMissingHost& m : s.missing_hosts) {
    missing.push_back({{"host", m.host},
                       {"pointing_qps", m.pointing_qps},
                       {"pointing_hosts", m.pointing_hosts},
                       {"text", m.line}});
  }
  return {{"hosts", s.hosts},
          {"qps", s.qps},
          {"listed_hosts", s.listed_hosts},
          {"missing_hosts", missing},
          {"unplaced_qps", s.unplaced_qps},
          {"unplaced_hosts", s.unplaced_hosts},
          {"unlisted_hosts", s.unlisted_hosts},
          {"pairs", s.pairs},
          {"sound_pairs", s.sound_pairs},
          {"ambiguous", s.ambiguous},
          {"dangling", s.dangling},
          {"culprits", culprits},
          {"by_rule", by_rule},
          {"by_host", by_host},
          {"stuck_hosts", s.stuck_hosts},
          {"text", SummaryText(s)}};
}

// Text appended to a buffer and written to the stream a megabyte at a time.
class Sink {
 public:
  explicit Sink(std::ostream& out) : out_(out) { buf_.reserve(kFlushAt + (kFlushAt >> 2)); }
  ~Sink() { Flush(); }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  std::string* text() { return &buf_; }
  Sink& operator<<(std::string_view s) {
    buf_ += s;
    return *this;
  }
  // Writes the buffer once it holds a megabyte.
  void Spill() {
    if (buf_.size() >= kFlushAt) Flush();
  }
  void Flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr size_t kFlushAt = size_t{1} << 20;
  std::ostream& out_;
  std::string buf_;
};

// The document is written as it is produced, member by member and each
// pair on a line of its own, through a buffer of a megabyte: a million QPs
// never make a JSON tree, nor the whole text, in memory.
void PrintJson(std::ostream& os, const std::vector<Input>& inputs, const Observation& obs,
               const Pairing& pairing, const LiveReport& live, const OfflineJudgement& offline,
               size_t errors, size_t warnings, size_t infos, int code, const JobSummary& summary,
               Progress& progress) {
  Sink out(os);
  std::string* text = out.text();
  Json in = Json::array();
  for (const Input& i : inputs) {
    in.push_back({{"file", i.name}, {"kind", i.kind}, {"summary", i.what}, {"num_qps", i.qps}});
  }
  // The findings of each QP, in order: a QP's are a run of indexes.
  std::vector<size_t> order(live.findings.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return live.findings[x].qp < live.findings[y].qp; });
  auto findings_of = [&](size_t qp) {
    auto first = std::lower_bound(order.begin(), order.end(), qp,
                                  [&](size_t i, size_t q) { return live.findings[i].qp < q; });
    auto last = first;
    while (last != order.end() && live.findings[*last].qp == qp) ++last;
    return std::pair{first, last};
  };
  const Json head = JsonDocument();
  out << "{\n";
  for (auto it = head.begin(); it != head.end(); ++it) {
    out << Json(it.key()).dump() << ": " << it.value().dump() << ",\n";
  }
  out << "\"inputs\": " << in.dump() << ",\n\"notes\": " << Json(obs.notes).dump()
      << ",\n\"job_summary\": " << SummaryJson(summary).dump() << ",\n\"pairs\": [";
  size_t pair_count = 0;
  const size_t all_pairs = live.pairs.size() + (offline.present ? offline.verdict.pairs.size() : 0);
  auto next = [&] {
    out << (pair_count++ == 0 ? "\n" : ",\n");
    if (pair_count % 8192 == 0) {
      progress.Detail(std::to_string(pair_count) + " of " + std::to_string(all_pairs) + " pairs");
    }
  };
  for (const LivePairVerdict& v : live.pairs) {
    if (v.progress.rfind("not judged live", 0) == 0) continue;
    next();
    *text += "{\"how\":";
    AppendJsonString(v.pair.how, text);
    *text += ",\"unique\":";
    AppendJsonBool(v.pair.unique, text);
    *text += ",\"candidates\":";
    AppendJsonNumber(v.pair.candidates, text);
    *text += ",\"judged_by\":\"live rules\",\"sound\":";
    AppendJsonBool(v.sound, text);
    *text += ",\"progress\":";
    AppendJsonString(v.progress, text);
    *text += ",\"a\":";
    AppendObservedQpJson(obs.qps[v.pair.a], text);
    *text += ",\"b\":";
    AppendObservedQpJson(obs.qps[v.pair.b], text);
    *text += ",\"findings\":[";
    bool first = true;
    for (size_t side : {v.pair.a, v.pair.b}) {
      auto [from, to] = findings_of(side);
      for (auto it = from; it != to; ++it) {
        if (!first) text->push_back(',');
        first = false;
        AppendLiveFindingJson(obs, live.findings[*it], text);
      }
    }
    *text += "]}";
    out.Spill();
  }
  if (offline.present) {
    for (const trace::PairVerdict& p : offline.verdict.pairs) {
      const size_t e = CountSeverity(p.findings, Severity::kError) + p.failures.size();
      next();
      out << Json{{"how", p.pair.how},
                  {"unique", p.pair.unique},
                  {"candidates", p.pair.candidates},
                  {"judged_by", "validator rules"},
                  {"sound", e == 0},
                  {"progress", ""},
                  {"a", ObservedQpJson(offline.obs.qps[p.pair.a])},
                  {"b", ObservedQpJson(offline.obs.qps[p.pair.b])},
                  {"notes", p.notes},
                  {"num_failed_transitions", p.failures.size()},
                  {"findings", FindingsToJson(p.findings)}}
                 .dump();
      out.Spill();
    }
  }
  out << "\n],\n\"live_findings\": [";
  for (size_t i = 0; i < live.findings.size(); ++i) {
    out << (i == 0 ? "\n" : ",\n");
    AppendLiveFindingJson(obs, live.findings[i], text);
    out.Spill();
  }
  out << "\n],\n\"without_peer\": [";
  size_t lone = 0;
  for (const auto& [list, status] :
       {std::pair{&pairing.dangling, "dangling"}, std::pair{&pairing.unpaired, "unpaired"},
        std::pair{&pairing.ambiguous, "ambiguous"}}) {
    for (size_t i : *list) {
      out << (lone++ == 0 ? "\n" : ",\n") << "{\"status\":\"" << status << "\",\"qp\":";
      AppendObservedQpJson(obs.qps[i], text);
      out << "}";
      out.Spill();
    }
  }
  const Json totals = {{"pairs", pair_count},
                       {"errors", errors},
                       {"warnings", warnings},
                       {"info", infos},
                       {"exit_code", code}};
  out << "\n],\n\"summary\": " << totals.dump() << "\n}\n";
}

}  // namespace

bool WantsSnapshotMode(const std::vector<std::string>& files) {
  const std::vector<std::string> heads = FileHeads(files, kSnapshotHeadBytes);
  return std::any_of(heads.begin(), heads.end(), [](const std::string& head) {
    return LooksLikeSnapshot(head) || LooksLikeJobSnapshots(head);
  });
}

int RunSnapshotMode(const std::vector<std::string>& files, const SnapshotModeOptions& options,
                    const ReadInputFn& read, std::ostream& out, std::ostream& err) {
  if (!StdinAtMostOnce(files, err)) return kExitUsage;
  // Progress lines (progress.h) come from another thread: until it stops,
  // what reading has to say waits in `said`.
  Progress progress("qp-validate", options.progress ? &err : nullptr);
  std::ostringstream said;
  auto fail = [&] {
    progress.Stop();
    err << said.str();
    return kExitUsage;
  };
  Observation obs;
  obs.expected_hosts = options.hosts;
  // Size the QP table once from the files' heads (a million QPs moved at
  // each doubling cost more than reading them); the heads also tell a job
  // file, read as a stream, from the others, read whole.
  std::vector<std::string> heads;  // by file; "" for standard input
  size_t declared = 0;
  uint64_t total_bytes = 0;
  for (const std::string& f : files) {
    heads.push_back(f == "-" ? std::string() : FileHeads({f}, kSnapshotHeadBytes).front());
    declared += SnapshotHeadQps(heads.back());
    std::error_code ec;
    if (f != "-") total_bytes += std::filesystem::file_size(f, ec);
  }
  auto megabytes = [](uint64_t bytes) {
    return std::to_string((bytes + 500000) / 1000000) + " MB";
  };
  progress.Stage("read", "reading " + std::to_string(files.size()) +
                             (files.size() == 1 ? " file (" : " files (") + megabytes(total_bytes) +
                             ")");
  uint64_t bytes_read = 0;
  obs.qps.reserve(std::min<size_t>(declared, size_t{1} << 26));
  std::vector<Input> inputs;
  std::vector<Snapshot> snapshots;  // headers only (host, start): for the skew
  auto remember_start = [&](const Snapshot& s) {
    Snapshot header;
    header.host = s.host;
    header.started_epoch = s.started_epoch;
    snapshots.push_back(std::move(header));
  };
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const std::string& f = files[fi];
    progress.Detail(std::to_string(fi) + " of " + std::to_string(files.size()) + " read, " +
                    megabytes(bytes_read));
    Input in;
    in.name = InputName(f);
    // qp-inspect-mpi's job file (every rank's snapshot, each one input) is
    // read as a stream, at any size; from standard input, read whole first.
    std::unique_ptr<std::istream> job;
    std::optional<std::string> text;
    if (f != "-" && LooksLikeJobSnapshots(heads[fi])) {
      job = std::make_unique<std::ifstream>(f, std::ios::binary);
      if (!*job) {
        const int e = errno;
        said << "qp-validate: " << in.name << ": cannot open: " << std::strerror(e) << "\n";
        return fail();
      }
    } else {
      text = ReadOrSay(read, f, said);
      if (!text) return fail();
      bytes_read += text->size();
      if (LooksLikeJobSnapshots(*text))
        job = std::make_unique<std::istringstream>(std::move(*text));
    }
    const size_t before = obs.qps.size();
    if (job) {
      std::vector<std::string> listed;  // the job's hosts
      Result<size_t> ranks = ReadJobSnapshots(
          *job,
          [&](size_t r, Snapshot&& s) {
            Input part;
            part.name = in.name + "[" + std::to_string(r) + "]";
            part.kind = "snapshot";
            const size_t from = obs.qps.size();
            AddSnapshot(s, part.name, &obs);
            part.qps = obs.qps.size() - from;
            part.what = "host " + s.host + ", rank " + std::to_string(r) + ", " +
                        std::to_string(part.qps) + (part.qps == 1 ? " QP" : " QPs");
            inputs.push_back(std::move(part));
            remember_start(s);
            if (r % 16 == 15) {
              progress.Detail(in.name + ": " + std::to_string(r + 1) + " snapshots, " +
                              std::to_string(obs.qps.size()) + " QPs read");
            }
          },
          &listed);
      if (!ranks) {
        said << "qp-validate: " << in.name
             << ": not a usable job snapshot file: " << ranks.error().detail
             << (ranks.error().attribute.empty() ? "" : " (field " + ranks.error().attribute + ")")
             << "\n";
        return fail();
      }
      AddHostNames(listed, &obs.expected_hosts);
      std::error_code ec;
      if (f != "-") bytes_read += std::filesystem::file_size(f, ec);
      continue;
    }
    if (LooksLikeSnapshot(*text)) {
      in.kind = "snapshot";
      Result<Snapshot> s = SnapshotFromJson(*text);
      if (!s) {
        said << "qp-validate: " << in.name << ": not a usable snapshot: " << s.error().detail
             << (s.error().attribute.empty() ? "" : " (field " + s.error().attribute + ")") << "\n";
        return fail();
      }
      AddSnapshot(*s, in.name, &obs);
      for (const std::string& n : s->notes) obs.notes.push_back(in.name + ": " + n);
      in.what = "host " + (s->host.empty() ? std::string("?") : s->host) + ", " +
                std::to_string(s->samples.size()) +
                (s->samples.size() == 1 ? " sample" : " samples");
      if (s->samples.size() > 1) in.what += " " + Seconds(SnapshotInterval(*s)) + " apart";
      in.what += ", " + std::to_string(s->samples.back().ports.size()) + " ports";
      remember_start(*s);
      if (s->samples.size() == 1) {
        obs.notes.push_back(in.name +
                            ": one sample: moving and stuck cannot be told apart (take it with "
                            "qp-inspect -o, which samples twice)");
      }
    } else if (trace::LooksLikeTrace(*text)) {
      in.kind = "trace";
      Result<trace::TraceHeader> h = trace::ReadTrace(*text, in.name, obs);
      if (!h) {
        said << "qp-validate: " << in.name << ": " << h.error().detail << "\n";
        return fail();
      }
      in.what = (h->comm.empty() ? "?" : h->comm) + " pid " + std::to_string(h->pid) +
                (h->host.empty() ? "" : " on " + h->host);
    } else {
      in.kind = "dump";
      Result<oob::Dump> d = oob::DecodeDumpJson(*text);
      if (!d) {
        said << "qp-validate: " << in.name
             << ": not a snapshot, a trace or an endpoint/dump file: " << d.error().detail << "\n";
        return fail();
      }
      AddDump(d->local.endpoint, d->local.plan, in.name, &obs);
      const EndpointInfo& e = d->local.endpoint;
      in.what = (e.identity.host.empty() ? "?" : e.identity.host) + " " + e.identity.device +
                (d->local.plan ? ", applied attributes" : ", description only");
    }
    in.qps = obs.qps.size() - before;
    in.what += ", " + std::to_string(in.qps) + (in.qps == 1 ? " QP" : " QPs");
    inputs.push_back(std::move(in));
  }
  if (snapshots.size() > 1 && SnapshotSkewSeconds(snapshots) > 0) {
    char skew[96];
    std::snprintf(skew, sizeof skew, "%.3f s", SnapshotSkewSeconds(snapshots));
    obs.notes.push_back("the " + std::to_string(snapshots.size()) +
                        " snapshots' first samples started within " + skew +
                        " of each other (their hosts' wall clocks)");
  }
  if (obs.qps.empty()) {
    said << "qp-validate: the inputs hold no QP (was the snapshot taken while the job ran?)\n";
    return fail();
  }

  progress.Stage("pair and judge",
                 "pairing and judging " + std::to_string(obs.qps.size()) + " QPs");
  const ObservationVerdict v = JudgeObserved(obs);
  progress.Stage("sum up", "summing up " + std::to_string(v.live.pairs.size()) + " pairs");
  const JobSummary summary = SummarizeJob(obs, v);
  progress.Stage("print", options.json ? "writing the JSON verdict" : "writing the verdict");
  // A listed host that sent no snapshot is an error of the job (job_summary.h).
  const size_t errors = summary.errors;
  const int code = errors != 0 ? kExitFindings : kExitOk;
  if (!options.svg.empty()) {
    std::ofstream svg(options.svg, std::ios::binary | std::ios::trunc);
    svg << VerdictMatrixSvg(obs, v, summary);
    svg.close();
    if (!svg) {
      said << "qp-validate: " << options.svg << ": cannot write the matrix\n";
      return fail();
    }
  }
  if (options.json) {
    PrintJson(out, inputs, obs, v.pairing, v.live, v.offline, errors, v.warnings, v.infos, code,
              summary, progress);
  } else {
    PrintText(out, inputs, obs, v.pairing, v.live, v.offline, errors, v.warnings, v.infos, summary);
  }
  out.flush();
  progress.Stop();
  return code;
}

std::vector<RuleInfo> AllRules() {
  std::vector<RuleInfo> all(RuleCatalogue().begin(), RuleCatalogue().end());
  all.insert(all.end(), LiveRuleCatalogue().begin(), LiveRuleCatalogue().end());
  return all;
}

std::string RuleFile(const RuleInfo& rule) {
  if (rule.family == "live") return "qpconnect/src/observe/live_judge.cc";
  return "qpconnect/src/validate/rules_" + std::string(rule.family) + ".cc";
}

}  // namespace qpconnect::tools::qp_validate
