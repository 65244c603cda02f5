// SPDX-License-Identifier: MIT
#include "trace_mode.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "findings_json.h"
#include "findings_text.h"
#include "json_document.h"
#include "observed_json.h"
#include "qpconnect/observe/observed.h"
#include "qpconnect/observe/trace_judge.h"
#include "qpconnect/observe/trace_reader.h"
#include "qpconnect/verbs/qp_attrs.h"

namespace qpconnect::tools::qp_validate {
namespace {

using trace::FailedTransition;
using trace::QpnText;
using Json = nlohmann::ordered_json;

struct Input {
  std::string name;
  trace::TraceHeader header;
};

std::string ErrnoText(int e) { return std::to_string(e) + " (" + std::strerror(e) + ")"; }

std::string TransitionsText(const ObservedQp& q) {
  std::string s;
  for (const ObservedTransition& t : q.transitions) {
    if (!s.empty()) s += ", ";
    s += (t.from.empty() ? "?" : t.from) + "->" + (t.to.empty() ? t.from : t.to);
    if (t.result != 0) s += " FAILED: errno " + ErrnoText(t.sys_errno);
  }
  return s.empty() ? "no transition" : s;
}

std::string QpText(const ObservedQp& q) {
  std::string s = (q.type_name.empty() ? "?" : q.type_name) + " QP " + QpnText(q.qpn) + " on " +
                  (q.device.empty() ? "?" : q.device);
  if (q.port != 0) s += " port " + std::to_string(q.port);
  s += " of " + (q.comm.empty() ? "?" : q.comm) + " pid " + std::to_string(q.pid);
  if (!q.host.empty()) s += " on " + q.host;
  s += " (" + q.origin + "): " + TransitionsText(q);
  if (q.creation_unseen) s += "; created unseen";
  if (q.destroyed) s += "; destroyed";
  return s;
}

void PrintFailure(std::ostream& out, const Observation& obs, const FailedTransition& f,
                  const std::string& side) {
  const ObservedQp& q = obs.qps[f.qp];
  const ObservedTransition& t = q.transitions[f.transition];
  out << "  failed: " << side << (side.empty() ? "" : " ") << "QP " << QpnText(q.qpn) << " "
      << t.from << "->" << t.to << ", ibv_modify_qp returned " << t.result << ", errno "
      << ErrnoText(t.sys_errno) << "\n";
  out << "          mask " << verbs::DecodeMask(t.mask) << "\n";
  for (const Finding& c : f.causes) {
    out << "          likely cause: " << c.id << ": " << c.message << "\n";
  }
  if (!f.mask_problem.empty()) out << "          likely cause: " << f.mask_problem << "\n";
  if (f.causes.empty() && f.mask_problem.empty()) {
    out << "          the validator finds no cause among the attributes this call sent\n";
  }
  if (!f.errno_hint.empty()) out << "          errno: " << f.errno_hint << "\n";
}

void PrintText(std::ostream& out, const std::vector<Input>& inputs, const Observation& obs,
               const trace::Verdict& v) {
  out << "traces: " << inputs.size() << (inputs.size() == 1 ? " file" : " files") << "\n";
  for (const Input& in : inputs) {
    const trace::TraceHeader& h = in.header;
    out << "  " << in.name << ": " << (h.comm.empty() ? "?" : h.comm) << " pid " << h.pid;
    if (!h.host.empty()) out << " on " << h.host;
    out << ", " << h.qps << (h.qps == 1 ? " QP" : " QPs") << "\n";
  }
  for (const std::string& n : obs.notes) out << "note: " << n << "\n";
  for (size_t i = 0; i < v.pairs.size(); ++i) {
    const trace::PairVerdict& p = v.pairs[i];
    out << "\npair " << i + 1 << " (" << p.pair.how << ")\n";
    out << "  local:  " << QpText(obs.qps[p.pair.a]) << "\n";
    out << "  remote: " << QpText(obs.qps[p.pair.b]) << "\n";
    for (const std::string& n : p.notes) out << "  note: " << n << "\n";
    for (const FailedTransition& f : p.failures) {
      PrintFailure(out, obs, f, f.qp == p.pair.a ? "local" : "remote");
    }
    if (!p.judged) continue;
    PrintFindingsText(out, p.findings, "  ");
    const size_t errors = CountSeverity(p.findings, Severity::kError) + p.failures.size();
    out << "  => "
        << FindingCounts(errors, CountSeverity(p.findings, Severity::kWarning),
                         CountSeverity(p.findings, Severity::kInfo))
        << (errors != 0 ? ": this pair does not work as traced\n" : ": sound\n");
  }
  for (const trace::LoneVerdict& l : v.lone) {
    out << "\nno peer in the given traces (" << l.status << "): " << QpText(obs.qps[l.qp]) << "\n";
    out << "  " << l.detail << "\n";
    for (const FailedTransition& f : l.failures) PrintFailure(out, obs, f, "");
    PrintFindingsText(out, l.findings, "  ");
  }
  out << "\n"
      << v.pairs.size() << (v.pairs.size() == 1 ? " pair, " : " pairs, ") << v.lone.size()
      << (v.lone.size() == 1 ? " QP" : " QPs") << " without a peer; "
      << FindingCounts(v.errors, v.warnings, v.infos)
      << (v.errors != 0 ? ": these QPs do not work together as traced.\n" : ": no errors.\n");
}

Json FailuresJson(const Observation& obs, const std::vector<FailedTransition>& failures,
                  const trace::PairVerdict* pair) {
  Json a = Json::array();
  for (const FailedTransition& f : failures) {
    const ObservedQp& q = obs.qps[f.qp];
    const ObservedTransition& t = q.transitions[f.transition];
    Json j;
    if (pair != nullptr) j["side"] = f.qp == pair->pair.a ? "local" : "remote";
    j["qpn"] = q.qpn;
    j["from"] = t.from;
    j["to"] = t.to;
    j["mask"] = verbs::DecodeMask(t.mask);
    j["result"] = t.result;
    j["errno"] = t.sys_errno;
    j["errno_text"] = std::strerror(t.sys_errno);
    j["mask_problem"] = f.mask_problem;
    j["errno_hint"] = f.errno_hint;
    j["likely_causes"] = FindingsToJson(f.causes);
    a.push_back(std::move(j));
  }
  return a;
}

Json SummaryJson(const std::vector<Finding>& findings, size_t failures) {
  return {{"errors", CountSeverity(findings, Severity::kError) + failures},
          {"warnings", CountSeverity(findings, Severity::kWarning)},
          {"info", CountSeverity(findings, Severity::kInfo)}};
}

void PrintJson(std::ostream& out, const std::vector<Input>& inputs, const Observation& obs,
               const trace::Verdict& v, int exit_code) {
  Json traces = Json::array();
  for (const Input& in : inputs) {
    traces.push_back({{"file", in.name},
                      {"host", in.header.host},
                      {"pid", in.header.pid},
                      {"comm", in.header.comm},
                      {"complete", in.header.complete},
                      {"num_qps", in.header.qps}});
  }
  Json pairs = Json::array();
  for (const trace::PairVerdict& p : v.pairs) {
    pairs.push_back({{"how", p.pair.how},
                     {"judged", p.judged},
                     {"local", ObservedQpJson(obs.qps[p.pair.a])},
                     {"remote", ObservedQpJson(obs.qps[p.pair.b])},
                     {"notes", p.notes},
                     {"summary", SummaryJson(p.findings, p.failures.size())},
                     {"failed_transitions", FailuresJson(obs, p.failures, &p)},
                     {"findings", FindingsToJson(p.findings)}});
  }
  Json lone = Json::array();
  for (const trace::LoneVerdict& l : v.lone) {
    lone.push_back({{"status", l.status},
                    {"detail", l.detail},
                    {"qp", ObservedQpJson(obs.qps[l.qp])},
                    {"failed_transitions", FailuresJson(obs, l.failures, nullptr)},
                    {"findings", FindingsToJson(l.findings)}});
  }
  Json doc = JsonDocument();
  doc["traces"] = std::move(traces);
  doc["notes"] = obs.notes;
  doc["pairs"] = std::move(pairs);
  doc["without_peer"] = std::move(lone);
  doc["summary"] = {{"pairs", v.pairs.size()}, {"without_peer", v.lone.size()},
                    {"errors", v.errors},      {"warnings", v.warnings},
                    {"info", v.infos},         {"exit_code", exit_code}};
  out << doc.dump(1) << "\n";
}

}  // namespace

bool WantsTraceMode(const std::vector<std::string>& files) {
  const std::vector<std::string> heads = FileHeads(files, 64);
  return std::any_of(heads.begin(), heads.end(),
                     [](const std::string& head) { return trace::LooksLikeTrace(head); });
}

int RunTraceMode(const std::vector<std::string>& files, bool json, const ReadInputFn& read,
                 std::ostream& out, std::ostream& err) {
  if (!StdinAtMostOnce(files, err)) return kExitUsage;
  Observation obs;
  std::vector<Input> inputs;
  for (const std::string& f : files) {
    Input in;
    in.name = InputName(f);
    std::optional<std::string> text = ReadOrSay(read, f, err);
    if (!text) return kExitUsage;
    Result<trace::TraceHeader> header = trace::ReadTrace(*text, in.name, obs);
    if (!header) {
      err << "qp-validate: " << in.name << ": " << header.error().detail << "\n";
      if (!trace::LooksLikeTrace(*text)) {
        err << "qp-validate: give two endpoint or dump files, or qp-trace files (any number)\n";
      }
      return kExitUsage;
    }
    in.header = *header;
    inputs.push_back(std::move(in));
  }
  if (obs.qps.empty()) {
    err << "qp-validate: the traces record no QP (did the program create one? was it run under "
           "qp-trace?)\n";
    return kExitUsage;
  }
  const trace::Verdict v = trace::JudgeObservation(obs);
  const int code = v.errors != 0 ? kExitFindings : kExitOk;
  if (json) {
    PrintJson(out, inputs, obs, v, code);
  } else {
    PrintText(out, inputs, obs, v);
  }
  return code;
}

}  // namespace qpconnect::tools::qp_validate
