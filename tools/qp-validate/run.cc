// SPDX-License-Identifier: MIT
#include "run.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "cli_args.h"
#include "exit_codes.h"
#include "findings_json.h"
#include "findings_text.h"
#include "json_document.h"
#include "qpconnect/diagnostic.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/observe/job_hosts.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/result.h"
#include "qpconnect/validate.h"
#include "snapshot_mode.h"
#include "trace_mode.h"
#include "usage.h"
#include "version.h"

namespace qpconnect::tools::qp_validate {
namespace {

constexpr std::string_view kTool = "qp-validate";

// Larger inputs are refused before decoding (the JSON decoder's own cap is 256 MiB).
constexpr size_t kMaxInputBytes = size_t{256} << 20;

// The option table: constant data (cli_args.h).
constexpr OptionSpec kSpecs[] = {
    {'h', "help", false, "", "show this help and exit"},
    {'j', "json", false, "", "print one JSON document instead of text"},
    {'t', "transport", true, "rc|uc|ud",
     "judge both sides as this transport (overrides the files)"},
    {0, "list-rules", false, "", "print the rule catalogue and exit (text, --json or --markdown)"},
    {0, "markdown", false, "", "with --list-rules: Markdown, as in docs/rules.md"},
    {0, "svg", true, "FILE",
     "snapshots: also write the host-by-host matrix of verdicts to FILE (SVG)"},
    {0, "quiet", false, "",
     "snapshots: no progress lines on stderr (otherwise a line a second after the first 2 s)"},
    {0, "hosts", true, "LIST",
     "snapshots: the job's hosts, as Slurm and pdsh write them (node[01-04,07]); a host no "
     "input names is reported as having sent no snapshot"},
    {0, "hostfile", true, "FILE",
     "snapshots: the job's hosts from an mpirun hostfile (one host a line: node01 slots=8)"},
    VersionOption(),
};

std::span<const OptionSpec> Specs() { return kSpecs; }

// The statuses qp-validate exits with (exit_codes.h's table).
constexpr ExitCode kExits[] = {kExitOk, kExitFindings, kExitUsage};

std::string Help() {
  return "Usage: qp-validate [--json] [--transport rc|uc|ud] A.json B.json\n"
         "       qp-validate [--json] DUMP.json\n"
         "       qp-validate [--json] TRACE TRACE [TRACE...]\n"
         "       qp-validate [--json] [--svg FILE] [--hosts LIST] [--hostfile FILE] [--quiet]\n"
         "                   SNAPSHOT [SNAPSHOT|TRACE|DUMP...]\n"
         "       qp-validate --list-rules [--json | --markdown]\n"
         "\n"
         "Checks two endpoint descriptions against the rules for connecting RC, UC and\n"
         "UD queue pairs by hand (P_Key, PSN, QPN, path MTU, rd_atomic, LID, GID, RoCE\n"
         "version and family, Q_Key, port and device limits) and prints every finding.\n"
         "No RDMA device is needed.\n"
         "\n"
         "A.json is the local side and B.json the remote side: endpoint JSON\n"
         "(docs/wire-format.md) or dumps written by `qp-connect --dump`, whose applied\n"
         "attributes are then judged too. A dump that recorded its peer can be checked\n"
         "alone. `-` reads one file from standard input. Rules: docs/rules.md.\n"
         "\n"
         "TRACE files are written by `qp-trace` (one per process): their QPs are paired\n"
         "(by dest_qp_num and qp_num, and by GID/LID), each pair is judged as the\n"
         "programs applied it, each failed ibv_modify_qp is explained, and QPs with no\n"
         "peer in the traces are named. docs/trace.md.\n"
         "\n"
         "SNAPSHOT files are written by `qp-inspect -o` (the kernel's view of every QP\n"
         "on a host, in two samples): their QPs, with those of any traces and dumps\n"
         "given, are paired and each pair with a snapshot side is judged by the live\n"
         "rules (state, dangling rqpn, PSN window, progress, counters, stopped\n"
         "processes). A summary by host, process and rule comes first (\"pid 4411\n"
         "(python) on node-37 is stopped: 36 QPs on 12 hosts wait on it\"), then the\n"
         "pairs (with more than 64, those not sound). Given the job's host list\n"
         "(--hosts \"$SLURM_JOB_NODELIST\", --hostfile, or a qp-inspect-mpi job file's),\n"
         "a listed host that sent no snapshot is named, an error, with the QPs that\n"
         "point at it. docs/inspect.md.\n"
         "\n"
         "Options:\n" +
         FormatOptions(Specs()) +
         "\n"
         "0: no errors (warnings and notes allowed); 1: errors found (a listed host\n"
         "that sent no snapshot is one); 2 also for an unusable input file (the\n"
         "message names the file and where it is wrong) or host list.\n"
         "\n" +
         ExitStatusHelp(kExits);
}

// Reads `name` ("-" = `in`) whole, refusing more than kMaxInputBytes.
Result<std::string> ReadInput(const std::string& name, std::istream& in) {
  std::ifstream file;
  std::istream* src = &in;
  if (name != "-") {
    file.open(name, std::ios::binary);
    if (!file) {
      const int e = errno;
      return Error{ErrorCode::kIo, e, "read", "", std::string("cannot open: ") + std::strerror(e)};
    }
    src = &file;
  }
  std::string text;
  if (name != "-") {
    // A regular file in one read: a job's snapshots are hundreds of MB.
    std::error_code ec;
    const auto size = std::filesystem::file_size(name, ec);
    if (!ec && size <= kMaxInputBytes) {
      text.resize(static_cast<size_t>(size));
      file.read(text.data(), static_cast<std::streamsize>(size));
      text.resize(static_cast<size_t>(file.gcount()));
    }
  }
  char buf[65536];
  while (*src) {
    src->read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(src->gcount()));
    if (text.size() > kMaxInputBytes) {
      return Error{ErrorCode::kInvalidArgument, 0, "read", "",
                   "larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB"};
    }
  }
  if (src->bad()) return Error{ErrorCode::kIo, 0, "read", "", "read error"};
  return text;
}

struct Input {
  std::string name;  // as given ("-" shown as "<stdin>")
  oob::Dump dump;
};

Result<Input> Load(const std::string& name, std::istream& in) {
  Input input;
  input.name = name == "-" ? "<stdin>" : name;
  Result<std::string> text = ReadInput(name, in);
  if (!text) return Error{text.error().code, 0, input.name, "", text.error().detail};
  if (text->find_first_not_of(" \t\r\n") == std::string::npos) {
    return Error{ErrorCode::kProtocol, 0, input.name, "", "is empty"};
  }
  Result<oob::Dump> dump = oob::DecodeDumpJson(*text);
  if (!dump) {
    // The codec starts the detail with "line L, column C: " when it knows
    // where in the text the fault is, and names the field path in it.
    const Error& e = dump.error();
    std::string what = e.detail;
    if (what.rfind("line ", 0) != 0) what = "not a usable endpoint or dump: " + what;
    if (!e.attribute.empty() && what.find(e.attribute) == std::string::npos) {
      what += " (field " + e.attribute + ")";
    }
    return Error{e.code, 0, input.name, e.attribute, std::move(what)};
  }
  input.dump = std::move(*dump);
  return input;
}

// The job's host list of --hosts and --hostfile (both may be given).
Result<std::vector<std::string>> JobHostList(const ParsedArgs& a) {
  Result<std::vector<std::string>> hosts = JobHostsOf(a.Get("hosts"), a.Get("hostfile"));
  if (!hosts) {
    return Usage((hosts.error().operation == "hostfile" ? "--hostfile " : "--hosts ") +
                 hosts.error().detail);
  }
  return hosts;
}

std::optional<Transport> ParseTransport(const std::string& s) {
  if (s == "rc") return Transport::kRc;
  if (s == "uc") return Transport::kUc;
  if (s == "ud") return Transport::kUd;
  return std::nullopt;
}

// What the report says about one side.
struct SideReport {
  std::string file;
  const EndpointInfo* ep = nullptr;
  bool plan_given = false;
};

std::string Describe(const SideReport& s) {
  const EndpointInfo& e = *s.ep;
  std::string out = s.file + " (" + TransportName(e.transport) + "; ";
  out += e.identity.host.empty() ? "?" : e.identity.host;
  if (!e.identity.device.empty()) out += " " + e.identity.device;
  out += " port " + std::to_string(e.port.port_num) + ", " + LinkLayerName(e.port.link_layer);
  out += "; " + std::to_string(e.qps.size()) + (e.qps.size() == 1 ? " QP" : " QPs");
  out += s.plan_given ? "; applied attributes from the dump)" : "; attributes derived)";
  return out;
}

void PrintText(std::ostream& out, const SideReport& local, const SideReport& remote,
               const std::vector<std::string>& notes, const std::vector<Finding>& findings) {
  out << "local:  " << Describe(local) << "\n";
  out << "remote: " << Describe(remote) << "\n";
  for (const std::string& n : notes) out << "note: " << n << "\n";
  out << "\n";
  PrintFindingsText(out, findings);
  const size_t errors = CountSeverity(findings, Severity::kError);
  if (!findings.empty()) out << "\n";
  out << FindingCounts(errors, CountSeverity(findings, Severity::kWarning),
                       CountSeverity(findings, Severity::kInfo));
  out << (errors != 0 ? ": these QPs will not connect as described.\n" : ": no errors.\n");
}

nlohmann::ordered_json SideJson(const SideReport& s) {
  const EndpointInfo& e = *s.ep;
  return {{"file", s.file},          {"transport", TransportName(e.transport)},
          {"host", e.identity.host}, {"device", e.identity.device},
          {"port", e.port.port_num}, {"link_layer", LinkLayerName(e.port.link_layer)},
          {"num_qps", e.qps.size()}, {"plan", s.plan_given ? "given" : "derived"}};
}

void PrintJson(std::ostream& out, const SideReport& local, const SideReport& remote,
               const std::vector<std::string>& notes, const std::vector<Finding>& findings,
               int exit_code) {
  nlohmann::ordered_json findings_json = FindingsToJson(findings);
  nlohmann::ordered_json doc = JsonDocument();
  doc["local"] = SideJson(local);
  doc["remote"] = SideJson(remote);
  doc["notes"] = notes;
  doc["summary"] = {{"errors", CountSeverity(findings, Severity::kError)},
                    {"warnings", CountSeverity(findings, Severity::kWarning)},
                    {"info", CountSeverity(findings, Severity::kInfo)},
                    {"exit_code", exit_code}};
  doc["findings"] = std::move(findings_json);
  out << doc.dump(1) << "\n";
}

void ListRulesText(std::ostream& out) {
  for (const RuleInfo& r : AllRules()) {
    std::string id(r.id);
    id.resize(30, ' ');
    std::string sev = SeverityName(r.severity);
    sev.resize(8, ' ');
    std::string transports = r.transports.ToString();
    transports.resize(9, ' ');
    out << id << sev << transports << r.attribute << "\n";
  }
}

void ListRulesJson(std::ostream& out) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const RuleInfo& r : AllRules()) {
    a.push_back({{"id", r.id},
                 {"severity", SeverityName(r.severity)},
                 {"transports", TransportsToJson(r.transports)},
                 {"attribute", r.attribute},
                 {"file", RuleFile(r)},
                 {"checks", r.checks},
                 {"symptom", r.symptom},
                 {"source", r.source}});
  }
  nlohmann::ordered_json doc = JsonDocument();
  doc["rules"] = std::move(a);
  out << doc.dump(1) << "\n";
}

const char* FamilyTitle(std::string_view family) {
  if (family == "local") return "Local sanity and the pair's shape";
  if (family == "pkey") return "P_Key";
  if (family == "psn_qpn") return "QP lists, QPNs and PSNs";
  if (family == "mtu") return "Path MTU and UD message size";
  if (family == "rd_atomic") return "RDMA read/atomic depth";
  if (family == "address") return "Address vector: port, LID, GRH, GID";
  if (family == "roce") return "RoCE (Ethernet link layer)";
  if (family == "qkey") return "Q_Key";
  if (family == "sa") return "Against the subnet administrator's path (InfiniBand)";
  if (family == "path") return "Against the kernel's RoCE path (route, neighbour, netdev)";
  if (family == "live") return "Live rules (kernel snapshots)";
  return "Other";
}

}  // namespace

std::string RulesMarkdown() {
  std::string md;
  std::string_view family;
  for (const RuleInfo& r : AllRules()) {
    if (r.family != family) {
      family = r.family;
      md += "## " + std::string(FamilyTitle(family)) + "\n\n";
      md += "Rule file: `" + RuleFile(r) + "`.\n\n";
    }
    // One paragraph per rule: severity, transports, attribute, what it
    // checks, the symptom when violated, the source.
    md += "### `" + std::string(r.id) + "`\n\n";
    md += "**" + std::string(SeverityName(r.severity)) + "**, " + r.transports.ToString() + ", `" +
          std::string(r.attribute) + "`. " + std::string(r.checks) + " *Violated:* " +
          std::string(r.symptom) + " *Source:* " + std::string(r.source) + "\n\n";
  }
  return md;
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return Run(args, std::cin, out, err);
}

int Run(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
        std::ostream& err) {
  Result<ParsedArgs> parsed = ParseArgs(args, Specs());
  if (!parsed) return UsageError(kTool, err, parsed.error().detail);
  const ParsedArgs& a = *parsed;
  if (auto answered = AnswerHelpOrVersion(a, kTool, Help, out)) return *answered;
  const bool json = a.Has("json");
  if (a.Has("list-rules")) {
    if (!a.positionals.empty()) return UsageError(kTool, err, "--list-rules takes no file");
    if (json && a.Has("markdown"))
      return UsageError(kTool, err, "choose one of --json and --markdown");
    if (a.Has("markdown")) {
      out << RulesMarkdown();
    } else if (json) {
      ListRulesJson(out);
    } else {
      ListRulesText(out);
    }
    return kExitOk;
  }
  if (a.Has("markdown")) return UsageError(kTool, err, "--markdown goes with --list-rules");

  std::optional<Transport> transport;
  if (auto t = a.Get("transport")) {
    transport = ParseTransport(*t);
    if (!transport)
      return UsageError(kTool, err, "--transport must be rc, uc or ud, not '" + *t + "'");
  }
  // A directory stands for its files (one snapshot per host: qp-inspect --at
  // -o DIR/%h.json on every node), in name order.
  std::vector<std::string> files;
  for (const std::string& f : a.positionals) {
    std::error_code ec;
    if (f != "-" && std::filesystem::is_directory(f, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(f, ec)) {
        if (e.is_regular_file(ec)) in_dir.push_back(e.path().string());
      }
      if (in_dir.empty()) return UsageError(kTool, err, "the directory " + f + " holds no file");
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(f);
    }
  }
  const std::optional<std::string> svg = a.Get("svg");
  const bool listed = a.Has("hosts") || a.Has("hostfile");
  if (WantsSnapshotMode(files)) {
    if (transport) return UsageError(kTool, err, "--transport does not apply to snapshots");
    SnapshotModeOptions options;
    options.json = json;
    options.svg = svg.value_or("");
    options.progress = !a.Has("quiet");
    if (listed) {
      Result<std::vector<std::string>> hosts = JobHostList(a);
      if (!hosts) return UsageError(kTool, err, hosts.error().detail);
      options.hosts = std::move(*hosts);
    }
    return RunSnapshotMode(
        files, options, [&](const std::string& f) { return ReadInput(f, in); }, out, err);
  }
  if (svg) return UsageError(kTool, err, "--svg applies to snapshots (qp-inspect -o files)");
  if (listed) {
    return UsageError(kTool, err,
                      "--hosts and --hostfile apply to snapshots (qp-inspect -o files)");
  }
  if (WantsTraceMode(files)) {
    if (transport) return UsageError(kTool, err, "--transport does not apply to traces");
    return RunTraceMode(
        files, json, [&](const std::string& f) { return ReadInput(f, in); }, out, err);
  }
  if (files.empty() || files.size() > 2) {
    return UsageError(kTool, err,
                      files.empty()
                          ? "missing the endpoint files (A.json B.json)"
                          : "too many files: give two endpoint descriptions (or qp-trace files)");
  }
  if (files.size() == 2 && files[0] == "-" && files[1] == "-") {
    return UsageError(kTool, err, "'-' (standard input) can be given once");
  }

  std::vector<Input> inputs;
  for (const std::string& f : files) {
    Result<Input> input = Load(f, in);
    if (!input) {
      err << "qp-validate: " << input.error().operation << ": " << input.error().detail << "\n";
      return kExitUsage;
    }
    inputs.push_back(std::move(*input));
  }

  EndpointInfo local = inputs[0].dump.local.endpoint;
  std::optional<ConnectionPlan> local_plan = inputs[0].dump.local.plan;
  EndpointInfo remote;
  std::optional<ConnectionPlan> remote_plan;
  std::string remote_file;
  std::vector<std::string> notes;
  if (inputs.size() == 2) {
    remote = inputs[1].dump.local.endpoint;
    remote_plan = inputs[1].dump.local.plan;
    remote_file = inputs[1].name;
    if (inputs[0].dump.remote && *inputs[0].dump.remote != remote) {
      notes.push_back(inputs[0].name + " recorded a different peer than " + inputs[1].name +
                      " describes (another run, or the exchange altered it)");
    }
    if (inputs[1].dump.remote && *inputs[1].dump.remote != local) {
      notes.push_back(inputs[1].name + " recorded a different peer than " + inputs[0].name +
                      " describes (another run, or the exchange altered it)");
    }
  } else {
    if (!inputs[0].dump.remote) {
      err << "qp-validate: " << inputs[0].name
          << ": holds no peer description (not a dump with \"remote\"); give the peer's file "
             "too\n";
      return kExitUsage;
    }
    remote = *inputs[0].dump.remote;
    remote_file = inputs[0].name + " (recorded peer)";
  }
  if (transport) {
    local.transport = remote.transport = *transport;
    if (local_plan) local_plan->transport = *transport;
    if (remote_plan) remote_plan->transport = *transport;
  }

  ValidationInput vin;
  vin.local = &local;
  vin.remote = &remote;
  vin.local_plan = local_plan;
  vin.remote_plan = remote_plan;
  const std::vector<Finding> findings = Validate(vin);
  const int code = HasErrors(findings) ? kExitFindings : kExitOk;

  const SideReport l{inputs[0].name, &local, local_plan.has_value()};
  const SideReport r{remote_file, &remote, remote_plan.has_value()};
  if (json) {
    PrintJson(out, l, r, notes, findings, code);
  } else {
    PrintText(out, l, r, notes, findings);
  }
  return code;
}

}  // namespace qpconnect::tools::qp_validate
