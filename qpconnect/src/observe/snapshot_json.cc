// SPDX-License-Identifier: MIT
#include "qpconnect/observe/snapshot_json.h"

#include "snapshot_scan.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <istream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <streambuf>

namespace qpconnect {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A JSON string, escaped.
std::string Quote(const std::string& s) { return ordered_json(s).dump(); }

std::string Optional(const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : "null"; }

// One QP as one line of compact JSON.
void AppendQp(const KernelQp& q, std::string* out) {
  *out += "{\"device\":" + Quote(q.device) + ",\"port\":" + std::to_string(q.port) +
          ",\"lqpn\":" + std::to_string(q.lqpn) + ",\"rqpn\":" + Optional(q.rqpn) +
          ",\"type\":" + Quote(q.type) + ",\"state\":" + Quote(q.state) +
          ",\"sq_psn\":" + Optional(q.sq_psn) + ",\"rq_psn\":" + Optional(q.rq_psn) +
          ",\"path_mig_state\":" + Quote(q.path_mig_state) + ",\"pid\":" + std::to_string(q.pid) +
          ",\"comm\":" + Quote(q.comm) + ",\"process_state\":" + Quote(q.process_state);
  if (q.dgid) *out += ",\"dgid\":" + Quote(GidToString(*q.dgid));
  if (q.dlid) *out += ",\"dlid\":" + std::to_string(*q.dlid);
  if (!q.src_addr.empty()) *out += ",\"src_addr\":" + Quote(q.src_addr);
  if (!q.dst_addr.empty()) *out += ",\"dst_addr\":" + Quote(q.dst_addr);
  if (!q.dest_source.empty()) *out += ",\"dest_source\":" + Quote(q.dest_source);
  *out += "}";
}

std::string Hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void AppendIdentity(const PortIdentity& p, std::string* out) {
  ordered_json gids = ordered_json::array();
  for (const Gid& g : p.gids) gids.push_back(GidToString(g));
  *out += "{\"device\":" + Quote(p.device) + ",\"port\":" + std::to_string(p.port) +
          ",\"link_layer\":" + Quote(p.link_layer) + ",\"lid\":" + std::to_string(p.lid) +
          ",\"lmc\":" + std::to_string(p.lmc) + ",\"sm_lid\":" + std::to_string(p.sm_lid) +
          ",\"subnet_prefix\":" + Quote(Hex64(p.subnet_prefix)) + ",\"gids\":" + gids.dump() + "}";
}

void AppendPort(const KernelPortCounters& p, std::string* out) {
  ordered_json counters = ordered_json::object();
  for (const auto& [name, value] : p.counters) counters[name] = value;
  *out += "{\"device\":" + Quote(p.device) + ",\"port\":" + std::to_string(p.port) +
          ",\"counters\":" + counters.dump() + "}";
}

// The members of an ObservedPath, in file order (empty strings and false
// are left out).
constexpr const char* kPathStrings[] = {"source",
                                        "destination",
                                        "peer",
                                        "netdev",
                                        "facts",
                                        "route_error",
                                        "neighbour_address",
                                        "neighbour_state",
                                        "neighbour_mac",
                                        "peer_netdev",
                                        "peer_mac",
                                        "unknown"};

std::string* PathString(ObservedPath& p, std::string_view key) {
  std::string* fields[] = {&p.source,
                           &p.destination,
                           &p.peer,
                           &p.netdev,
                           &p.facts,
                           &p.route_error,
                           &p.neighbour_address,
                           &p.neighbour_state,
                           &p.neighbour_mac,
                           &p.peer_netdev,
                           &p.peer_mac,
                           &p.unknown};
  for (size_t i = 0; i < std::size(kPathStrings); ++i) {
    if (key == kPathStrings[i]) return fields[i];
  }
  return nullptr;
}

void AppendPath(const ObservedPath& path, std::string* out) {
  ObservedPath p = path;
  ordered_json j{{"device", p.device}, {"port", p.port}, {"lqpn", p.lqpn}, {"pid", p.pid}};
  for (const char* key : kPathStrings) {
    if (const std::string* v = PathString(p, key); !v->empty()) j[key] = *v;
  }
  if (p.source_gone) j["source_gone"] = true;
  if (p.destination_gone) j["destination_gone"] = true;
  *out += j.dump();
}

// Each element on a line of its own, indented.
template <typename T, typename Fn>
void AppendLines(const std::vector<T>& items, Fn append, std::string* out) {
  for (size_t i = 0; i < items.size(); ++i) {
    *out += "    ";
    append(items[i], out);
    *out += i + 1 < items.size() ? ",\n" : "\n";
  }
}

// Reads members of one JSON object, remembering the first failure with the
// path of the field at fault.
class Reader {
 public:
  explicit Reader(std::optional<Error>* failure) : failure_(failure) {}

  bool Fail(std::string field, const std::string& detail) {
    if (!field.empty() && field.back() == '.') field.pop_back();
    if (!*failure_) *failure_ = Error{ErrorCode::kProtocol, 0, "snapshot", field, detail};
    return false;
  }

  // The member `key` of `obj`, or nullptr (a failure unless `optional`).
  const json* Member(const json& obj, const std::string& path, const char* key, bool optional) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      if (!optional) Fail(path + key, "missing");
      return nullptr;
    }
    return &*it;
  }

  std::optional<uint64_t> Unsigned(const json& obj, const std::string& path, const char* key,
                                   uint64_t max, bool optional = false) {
    const json* v = Member(obj, path, key, optional);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      Fail(path + key, "not an unsigned integer");
      return std::nullopt;
    }
    const uint64_t x = v->get<uint64_t>();
    if (x > max) {
      Fail(path + key, std::to_string(x) + " is above " + std::to_string(max));
      return std::nullopt;
    }
    return x;
  }

  std::string String(const json& obj, const std::string& path, const char* key,
                     bool optional = true) {
    const json* v = Member(obj, path, key, optional);
    if (v == nullptr) return {};
    if (!v->is_string()) {
      Fail(path + key, "not a string");
      return {};
    }
    return v->get<std::string>();
  }

  const json* Array(const json& obj, const std::string& path, const char* key, bool optional) {
    const json* v = Member(obj, path, key, optional);
    if (v != nullptr && !v->is_array()) {
      Fail(path + key, "not an array");
      return nullptr;
    }
    return v;
  }

 private:
  std::optional<Error>* failure_;
};

constexpr uint64_t k24Bits = 0xffffff;

KernelQp ReadQp(Reader& r, const json& j, const std::string& path) {
  KernelQp q;
  if (!j.is_object()) {
    r.Fail(path, "not an object");
    return q;
  }
  q.device = r.String(j, path, "device", false);
  if (q.device.empty()) r.Fail(path + "device", "empty");
  q.port = static_cast<uint8_t>(r.Unsigned(j, path, "port", 255).value_or(0));
  q.lqpn = static_cast<uint32_t>(r.Unsigned(j, path, "lqpn", k24Bits).value_or(0));
  auto u24 = [&](const char* key) -> std::optional<uint32_t> {
    if (auto v = r.Unsigned(j, path, key, k24Bits, true)) return static_cast<uint32_t>(*v);
    return std::nullopt;
  };
  q.rqpn = u24("rqpn");
  q.sq_psn = u24("sq_psn");
  q.rq_psn = u24("rq_psn");
  q.type = r.String(j, path, "type", false);
  q.state = r.String(j, path, "state", false);
  q.path_mig_state = r.String(j, path, "path_mig_state");
  q.pid = static_cast<int>(
      r.Unsigned(j, path, "pid", static_cast<uint64_t>(std::numeric_limits<int>::max()), true)
          .value_or(0));
  q.comm = r.String(j, path, "comm");
  q.process_state = r.String(j, path, "process_state");
  if (std::string dgid = r.String(j, path, "dgid"); !dgid.empty()) {
    q.dgid = GidFromString(dgid);
    if (!q.dgid) r.Fail(path + "dgid", "not a GID");
  }
  if (auto dlid = r.Unsigned(j, path, "dlid", 0xffff, true)) q.dlid = static_cast<uint16_t>(*dlid);
  q.src_addr = r.String(j, path, "src_addr");
  q.dst_addr = r.String(j, path, "dst_addr");
  q.dest_source = r.String(j, path, "dest_source");
  return q;
}

PortIdentity ReadIdentity(Reader& r, const json& j, const std::string& path) {
  PortIdentity p;
  if (!j.is_object()) {
    r.Fail(path, "not an object");
    return p;
  }
  p.device = r.String(j, path, "device", false);
  p.port = static_cast<uint8_t>(r.Unsigned(j, path, "port", 255).value_or(0));
  p.lid = static_cast<uint16_t>(r.Unsigned(j, path, "lid", 0xffff, true).value_or(0));
  p.link_layer = r.String(j, path, "link_layer");
  p.lmc = static_cast<uint8_t>(r.Unsigned(j, path, "lmc", 7, true).value_or(0));
  p.sm_lid = static_cast<uint16_t>(r.Unsigned(j, path, "sm_lid", 0xffff, true).value_or(0));
  const std::string prefix = r.String(j, path, "subnet_prefix");
  if (!prefix.empty()) {
    char* end = nullptr;
    p.subnet_prefix = std::strtoull(prefix.c_str(), &end, 16);
    if (end == nullptr || *end != '\0') r.Fail(path + "subnet_prefix", "not a hex number");
  }
  if (const json* gids = r.Array(j, path, "gids", true)) {
    for (size_t k = 0; k < gids->size(); ++k) {
      const json& g = (*gids)[k];
      std::optional<Gid> gid = g.is_string() ? GidFromString(g.get<std::string>()) : std::nullopt;
      if (!gid) {
        r.Fail(path + "gids[" + std::to_string(k) + "]", "not a GID");
        break;
      }
      p.gids.push_back(*gid);
    }
  }
  return p;
}

KernelPortCounters ReadPort(Reader& r, const json& j, const std::string& path) {
  KernelPortCounters p;
  if (!j.is_object()) {
    r.Fail(path, "not an object");
    return p;
  }
  p.device = r.String(j, path, "device", false);
  p.port = static_cast<uint8_t>(r.Unsigned(j, path, "port", 255).value_or(0));
  const json* counters = r.Member(j, path, "counters", true);
  if (counters == nullptr) return p;
  if (!counters->is_object()) {
    r.Fail(path + "counters", "not an object");
    return p;
  }
  for (auto it = counters->begin(); it != counters->end(); ++it) {
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
      r.Fail(path + "counters." + it.key(), "not an unsigned integer");
      return p;
    }
    p.counters.push_back({it.key(), it->get<uint64_t>()});
  }
  return p;
}

ObservedPath ReadPath(Reader& r, const json& j, const std::string& path) {
  ObservedPath p;
  if (!j.is_object()) {
    r.Fail(path, "not an object");
    return p;
  }
  p.device = r.String(j, path, "device", false);
  p.port = static_cast<uint8_t>(r.Unsigned(j, path, "port", 255).value_or(0));
  p.lqpn = static_cast<uint32_t>(r.Unsigned(j, path, "lqpn", k24Bits).value_or(0));
  p.pid = static_cast<int>(
      r.Unsigned(j, path, "pid", static_cast<uint64_t>(std::numeric_limits<int>::max()), true)
          .value_or(0));
  for (const char* key : kPathStrings) *PathString(p, key) = r.String(j, path, key);
  for (auto [key, flag] : {std::pair{"source_gone", &p.source_gone},
                           std::pair{"destination_gone", &p.destination_gone}}) {
    const json* v = r.Member(j, path, key, true);
    if (v != nullptr && !v->is_boolean()) r.Fail(path + key, "not a boolean");
    if (v != nullptr && v->is_boolean()) *flag = v->get<bool>();
  }
  return p;
}

}  // namespace

std::string SnapshotToText(const Snapshot& snapshot) {
  size_t most = 0;
  for (const KernelSample& sample : snapshot.samples) most = std::max(most, sample.qps.size());
  std::string out =
      "{\"format\": " + Quote(std::string(kSnapshotFormat)) +
      ", \"version\": " + std::to_string(kSnapshotVersion) +
      ", \"num_qps\": " + std::to_string(most) + ",\n \"tool\": " + Quote(snapshot.tool) +
      ", \"host\": " + Quote(snapshot.host) + ", \"taken_at\": " + Quote(snapshot.taken_at) +
      (snapshot.started_epoch > 0
           ? ", \"started_epoch\": " + ordered_json(snapshot.started_epoch).dump()
           : std::string()) +
      ",\n \"interval_seconds\": " + ordered_json(SnapshotInterval(snapshot)).dump() +
      ", \"notes\": " + ordered_json(snapshot.notes).dump();
  // The start, the host identity and the job: members added to version 1, written when known.
  if (!snapshot.job.empty()) out += ",\n \"job\": " + Quote(snapshot.job);
  if (!snapshot.identity.empty()) {
    out += ",\n \"identity\": [\n";
    AppendLines(snapshot.identity, AppendIdentity, &out);
    out += " ]";
  }
  out += ",\n \"samples\": [";
  for (size_t i = 0; i < snapshot.samples.size(); ++i) {
    const KernelSample& s = snapshot.samples[i];
    out += i == 0 ? "\n" : ",\n";
    out += "  {\"at_seconds\": " + ordered_json(s.at_seconds).dump() + ",\n   \"qps\": [\n";
    out.reserve(out.size() + s.qps.size() * 240);
    AppendLines(s.qps, AppendQp, &out);
    out += "   ],\n   \"ports\": [\n";
    AppendLines(s.ports, AppendPort, &out);
    out += "   ]}";
  }
  out += "\n ]";
  if (!snapshot.paths.empty()) {
    out += ",\n \"paths\": [\n";
    AppendLines(snapshot.paths, AppendPath, &out);
    out += " ]";
  }
  out += "}\n";
  return out;
}

size_t SnapshotHeadQps(std::string_view head) {
  head = head.substr(0, 512);
  const size_t key = head.find("\"num_qps\":");
  if (key == std::string_view::npos) return 0;
  size_t at = key + 10;
  while (at < head.size() && head[at] == ' ') ++at;
  size_t n = 0;
  auto [next, ec] = std::from_chars(head.data() + at, head.data() + head.size(), n);
  return ec == std::errc() && next != head.data() + at ? n : 0;
}

namespace {

bool HasFormat(std::string_view text, std::string_view format) {
  // The writer puts "format" first; allow some leading whitespace and keys.
  const std::string_view head = text.substr(0, 512);
  size_t at = head.find("\"format\"");
  if (at == std::string_view::npos) return false;
  at += 8;
  while (at < head.size() && (head[at] == ' ' || head[at] == ':' || head[at] == '\n')) ++at;
  return head.substr(at).starts_with("\"" + std::string(format) + "\"");
}

Result<Snapshot> SnapshotFromDoc(const json& doc);

}  // namespace

bool LooksLikeSnapshot(std::string_view text) { return HasFormat(text, kSnapshotFormat); }

bool LooksLikeJobSnapshots(std::string_view text) { return HasFormat(text, kJobSnapshotsFormat); }

void WriteJobSnapshots(const std::vector<std::string>& snapshot_texts, std::ostream& out,
                       const std::vector<std::string>& hosts) {
  out << "{\"format\": " << Quote(std::string(kJobSnapshotsFormat)) << ", \"version\": 1,";
  if (!hosts.empty()) out << "\n \"hosts\": " << json(hosts).dump() << ",";
  out << "\n \"snapshots\": [\n";
  for (size_t i = 0; i < snapshot_texts.size(); ++i) {
    std::string_view t = snapshot_texts[i];
    while (!t.empty() && t.back() == '\n') t.remove_suffix(1);
    out << t << (i + 1 < snapshot_texts.size() ? ",\n" : "\n");
  }
  out << " ]}\n";
}

std::string JobSnapshotsToText(const std::vector<std::string>& snapshot_texts,
                               const std::vector<std::string>& hosts) {
  std::ostringstream out;
  WriteJobSnapshots(snapshot_texts, out, hosts);
  return std::move(out).str();
}

Result<std::vector<Snapshot>> JobSnapshotsFromJson(std::string_view text) {
  // The text as a stream, not copied: the one reader of job files.
  struct ViewBuf : std::streambuf {
    explicit ViewBuf(std::string_view t) {
      char* p = const_cast<char*>(t.data());
      setg(p, p, p + t.size());
    }
  } buf(text);
  std::istream in(&buf);
  std::vector<Snapshot> out;
  Result<size_t> n =
      ReadJobSnapshots(in, [&](size_t, Snapshot&& s) { out.push_back(std::move(s)); });
  if (!n) return n.error();
  return out;
}

Result<Snapshot> SnapshotFromJson(std::string_view text) {
  // The one-pass reader first; the JSON tree only to say what is wrong.
  if (std::optional<Snapshot> fast = snapshot_internal::ScanSnapshot(text)) return *std::move(fast);
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) {
    return Error{ErrorCode::kProtocol, 0, "snapshot", "", "not valid JSON"};
  }
  return SnapshotFromDoc(doc);
}

namespace {

Result<Snapshot> SnapshotFromDoc(const json& doc) {
  if (!doc.is_object()) return Error{ErrorCode::kProtocol, 0, "snapshot", "", "not a JSON object"};
  std::optional<Error> failure;
  Reader r(&failure);
  if (r.String(doc, "", "format", false) != kSnapshotFormat) {
    return Error{ErrorCode::kProtocol, 0, "snapshot", "format", "not a qp-inspect snapshot"};
  }
  const std::optional<uint64_t> version = r.Unsigned(doc, "", "version", 1u << 30);
  if (failure) return *failure;
  if (*version != static_cast<uint64_t>(kSnapshotVersion)) {
    return Error{ErrorCode::kProtocol, 0, "snapshot", "version",
                 "version " + std::to_string(*version) + " is not supported (this build reads " +
                     std::to_string(kSnapshotVersion) + ")"};
  }
  Snapshot s;
  s.tool = r.String(doc, "", "tool");
  s.host = r.String(doc, "", "host");
  s.taken_at = r.String(doc, "", "taken_at");
  if (const json* e = r.Member(doc, "", "started_epoch", true)) {
    if (!e->is_number() || e->get<double>() < 0) {
      r.Fail("started_epoch", "not a number of seconds");
    } else {
      s.started_epoch = e->get<double>();
    }
  }
  if (const json* notes = r.Array(doc, "", "notes", true)) {
    for (const json& n : *notes) {
      if (n.is_string()) s.notes.push_back(n.get<std::string>());
    }
  }
  s.job = r.String(doc, "", "job");
  if (const json* identity = r.Array(doc, "", "identity", true)) {
    for (size_t k = 0; k < identity->size() && !failure; ++k) {
      s.identity.push_back(ReadIdentity(r, (*identity)[k], "identity[" + std::to_string(k) + "]."));
    }
  }
  const json* samples = r.Array(doc, "", "samples", false);
  if (samples != nullptr && samples->empty()) r.Fail("samples", "empty: a snapshot has a sample");
  if (failure) return *failure;
  for (size_t i = 0; i < samples->size() && !failure; ++i) {
    const json& js = (*samples)[i];
    const std::string path = "samples[" + std::to_string(i) + "].";
    if (!js.is_object()) {
      r.Fail(path, "not an object");
      break;
    }
    KernelSample sample;
    const json* at = r.Member(js, path, "at_seconds", false);
    if (at != nullptr && !at->is_number()) r.Fail(path + "at_seconds", "not a number");
    if (at != nullptr && at->is_number()) sample.at_seconds = at->get<double>();
    if (const json* qps = r.Array(js, path, "qps", false)) {
      sample.qps.reserve(qps->size());
      for (size_t k = 0; k < qps->size() && !failure; ++k) {
        sample.qps.push_back(ReadQp(r, (*qps)[k], path + "qps[" + std::to_string(k) + "]."));
      }
    }
    if (const json* ports = r.Array(js, path, "ports", true)) {
      for (size_t k = 0; k < ports->size() && !failure; ++k) {
        sample.ports.push_back(
            ReadPort(r, (*ports)[k], path + "ports[" + std::to_string(k) + "]."));
      }
    }
    if (i > 0 && sample.at_seconds < s.samples.back().at_seconds) {
      r.Fail(path + "at_seconds", "earlier than the sample before it");
    }
    s.samples.push_back(std::move(sample));
  }
  if (const json* paths = r.Array(doc, "", "paths", true)) {
    for (size_t k = 0; k < paths->size() && !failure; ++k) {
      s.paths.push_back(ReadPath(r, (*paths)[k], "paths[" + std::to_string(k) + "]."));
    }
  }
  if (failure) return *failure;
  return s;
}

}  // namespace

}  // namespace qpconnect
