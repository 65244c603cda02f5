// SPDX-License-Identifier: MIT
#include "qpconnect/observe/trace_reader.h"

#include <infiniband/verbs.h>

#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "qpconnect/verbs/qp_attr_table.h"
#include "qpconnect/verbs/qp_attrs.h"

namespace qpconnect::trace {
namespace {

using nlohmann::json;

// A record longer than this is refused (a port record with a full 1024-entry
// GID table is about 100 KiB).
constexpr size_t kMaxLineBytes = size_t{4} << 20;

// Whether transition i's values are part of the applied attributes: it
// succeeded, or it is the last one (the failed attempt the program was left with).
bool InApplied(const ObservedQp& qp, size_t i) {
  return qp.transitions[i].result == 0 || i + 1 == qp.transitions.size();
}

// A malformed input; ReadTrace turns it into an Error.
struct Bad {
  std::string what;
};

// One record, with typed and range-checked access to its fields.
class Record {
 public:
  Record(const json& j, size_t line, std::string event, std::string path = {})
      : j_(j), line_(line), event_(std::move(event)), path_(std::move(path)) {}

  bool Has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  [[noreturn]] void Fail(const char* key, const std::string& expected) const {
    std::string got = j_.contains(key) ? j_.at(key).dump() : "nothing";
    if (got.size() > 40) got = got.substr(0, 37) + "...";
    throw Bad{"line " + std::to_string(line_) + " (" + event_ + "): field " + path_ + key +
              ": expected " + expected + ", got " + got};
  }

  std::string Str(const char* key) const {
    if (!Has(key) || !j_.at(key).is_string()) Fail(key, "a string");
    return j_.at(key).get<std::string>();
  }
  std::string StrOr(const char* key, std::string fallback) const {
    return Has(key) ? Str(key) : fallback;
  }

  uint64_t Uint(const char* key, uint64_t max) const {
    const std::string range = "an integer 0.." + std::to_string(max);
    if (!Has(key)) Fail(key, range);
    const json& v = j_.at(key);
    if (!v.is_number_integer()) Fail(key, range);
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > max) Fail(key, range);
      return u;
    }
    const int64_t s = v.get<int64_t>();
    if (s < 0 || static_cast<uint64_t>(s) > max) Fail(key, range);
    return static_cast<uint64_t>(s);
  }
  std::optional<uint64_t> OptUint(const char* key, uint64_t max) const {
    if (!Has(key)) return std::nullopt;
    return Uint(key, max);
  }

  int Int(const char* key) const {
    const std::string range = "an integer";
    if (!Has(key) || !j_.at(key).is_number_integer()) Fail(key, range);
    const int64_t v = j_.at(key).get<int64_t>();
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      Fail(key, "an int");
    }
    return static_cast<int>(v);
  }
  int IntOr(const char* key, int fallback) const { return Has(key) ? Int(key) : fallback; }

  bool Bool(const char* key) const {
    if (!Has(key) || !j_.at(key).is_boolean()) Fail(key, "true or false");
    return j_.at(key).get<bool>();
  }
  bool BoolOr(const char* key, bool fallback) const { return Has(key) ? Bool(key) : fallback; }

  Record Object(const char* key) const {
    if (!Has(key) || !j_.at(key).is_object()) Fail(key, "an object");
    return Record(j_.at(key), line_, event_, path_ + key + ".");
  }

  const json& Array(const char* key) const {
    if (!Has(key) || !j_.at(key).is_array()) Fail(key, "an array");
    return j_.at(key);
  }

  Record Element(const json& e, const char* array, size_t i) const {
    const std::string where = path_ + array + "[" + std::to_string(i) + "].";
    if (!e.is_object()) {
      throw Bad{"line " + std::to_string(line_) + " (" + event_ + "): field " +
                where.substr(0, where.size() - 1) + ": expected an object"};
    }
    return Record(e, line_, event_, where);
  }

  Gid GidField(const char* key) const {
    std::optional<Gid> g = GidFromString(Str(key));
    if (!g) Fail(key, "an IPv6-style GID");
    return *g;
  }

  // "mtu" in bytes, or "mtu_raw" with an enum value outside 1..5.
  Mtu MtuField(const char* key) const {
    const std::string raw = std::string(key) + "_raw";
    if (Has(raw.c_str())) return static_cast<Mtu>(Uint(raw.c_str(), 255));
    const Mtu m = MtuFromBytes(static_cast<int>(Uint(key, 4096)));
    if (m == Mtu::kInvalid) Fail(key, "256, 512, 1024, 2048 or 4096");
    return m;
  }

  size_t line() const { return line_; }

 private:
  const json& j_;
  size_t line_;
  std::string event_;
  std::string path_;  // "attr.ah_attr." for nested objects
};

AddressVector ReadAh(const Record& r) {
  AddressVector av;
  av.dlid = static_cast<uint16_t>(r.Uint("dlid", 0xffff));
  av.sl = static_cast<uint8_t>(r.OptUint("sl", 15).value_or(0));
  av.src_path_bits = static_cast<uint8_t>(r.OptUint("src_path_bits", 0xff).value_or(0));
  av.port_num = static_cast<uint8_t>(r.Uint("port_num", 0xff));
  av.is_global = r.Bool("is_global");
  if (av.is_global) {
    const Record g = r.Object("grh");
    av.dgid = g.GidField("dgid");
    av.sgid_index = static_cast<uint8_t>(g.Uint("sgid_index", 0xff));
    av.hop_limit = static_cast<uint8_t>(g.Uint("hop_limit", 0xff));
    av.traffic_class = static_cast<uint8_t>(g.OptUint("traffic_class", 0xff).value_or(0));
    av.flow_label = static_cast<uint32_t>(g.OptUint("flow_label", 0xffffffff).value_or(0));
  }
  return av;
}

// The values of `attr` for the bits of `mask`, over `base`: each attribute a
// QpAttrs carries, read under its field name (the attribute table) and within
// its field's type.
QpAttrs ReadAttrs(const Record& attr, int mask, QpAttrs base) {
  QpAttrs& a = base;
  verbs::ForEachMaskBit(mask & verbs::QpAttrsMask(), [&](int bit, const verbs::QpAttrInfo* row) {
    if (bit == IBV_QP_AV) {
      a.ah = ReadAh(attr.Object(row->field));
    } else if (row->format == verbs::AttrFormat::kMtu) {
      verbs::SetQpAttrsValue(a, bit, static_cast<uint32_t>(attr.MtuField(row->field)));
    } else {
      verbs::SetQpAttrsValue(a, bit, static_cast<uint32_t>(attr.Uint(row->field, row->field_max)));
    }
  });
  return base;
}

GidType GidTypeOf(const std::string& t) {
  if (t == "ib") return GidType::kIb;
  if (t == "roce-v1") return GidType::kRoceV1;
  if (t == "roce-v2") return GidType::kRoceV2;
  return GidType::kUnspecified;
}

LinkLayer LinkLayerOf(const std::string& l) {
  if (l == "infiniband") return LinkLayer::kInfiniBand;
  if (l == "ethernet") return LinkLayer::kEthernet;
  return LinkLayer::kUnspecified;
}

struct DeviceFacts {
  uint64_t node_guid = 0;
  uint32_t max_qp_rd_atom = 0;
  uint32_t max_qp_init_rd_atom = 0;
};

struct PortRecord {
  PortFacts facts;
  std::vector<GidEntry> gids;
  bool gids_known = false;
};

using PortKey = std::pair<std::string, uint8_t>;

// One QP while its file is read.
struct QpState {
  ObservedQp qp;
  std::string pd;
  bool live = true;
};

class Reader {
 public:
  Reader(std::string origin, Observation& out) : origin_(std::move(origin)), out_(out) {}

  TraceHeader Read(std::string_view text) {
    size_t line_no = 0;
    size_t pos = 0;
    bool started = false;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      const bool terminated = end != std::string_view::npos;
      if (!terminated) end = text.size();
      const std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (line.size() > kMaxLineBytes) {
        throw Bad{"line " + std::to_string(line_no) + ": longer than " +
                  std::to_string(kMaxLineBytes >> 20) + " MiB"};
      }
      json j;
      try {
        j = json::parse(line);
      } catch (const json::parse_error& e) {
        if (!terminated && started) {
          out_.notes.push_back(origin_ + ": line " + std::to_string(line_no) +
                               " is cut short (the process was killed while writing it?); "
                               "ignored");
          break;
        }
        throw Bad{started ? "line " + std::to_string(line_no) + ": not JSON (" + e.what() + ")"
                          : "not a qp-trace file: the first line is not a JSON start record"};
      }
      if (!j.is_object()) {
        throw Bad{started ? "line " + std::to_string(line_no) + ": not a JSON object"
                          : "not a qp-trace file: the first line is not a JSON start record"};
      }
      if (!started) {
        Start(j, line_no);
        started = true;
        continue;
      }
      if (!j.contains("event") || !j.at("event").is_string()) {
        throw Bad{"line " + std::to_string(line_no) + ": no \"event\" name"};
      }
      const std::string event = j.at("event").get<std::string>();
      Event(Record(j, line_no, event), event);
    }
    if (!started) throw Bad{"is empty"};
    Finish();
    return {host_, pid_, comm_, complete_, qps_.size()};
  }

 private:
  void Start(const json& j, size_t line_no) {
    if (!j.contains("qp_trace")) {
      throw Bad{"not a qp-trace file: the first record has no \"qp_trace\" version"};
    }
    const Record r(j, line_no, "start");
    const json& v = j.at("qp_trace");
    if (!v.is_number_integer() || v.get<int64_t>() < 1) r.Fail("qp_trace", "a version >= 1");
    if (v.get<int64_t>() > kTraceFormatVersion) {
      throw Bad{"trace format version " + std::to_string(v.get<int64_t>()) +
                " is newer than this qp-validate reads (" + std::to_string(kTraceFormatVersion) +
                "): use a qp-validate as new as the qp-trace that wrote it"};
    }
    if (r.StrOr("event", "start") != "start") r.Fail("event", "\"start\"");
    pid_ = static_cast<int>(r.Uint("pid", std::numeric_limits<int>::max()));
    host_ = r.StrOr("host", "");
    comm_ = r.StrOr("comm", "");
  }

  void Event(const Record& r, const std::string& event) {
    if (event == "create_qp") {
      CreateQp(r);
    } else if (event == "modify_qp") {
      ModifyQp(r);
    } else if (event == "destroy_qp") {
      DestroyQp(r);
    } else if (event == "create_ah") {
      CreateAh(r);
    } else if (event == "device") {
      Device(r);
    } else if (event == "port") {
      Port(r);
    } else if (event == "pkey") {
      Pkey(r);
    } else if (event == "end") {
      complete_ = true;
    } else if (event == "start") {
      throw Bad{"line " + std::to_string(r.line()) + ": a second start record"};
    }
    // Other records ("gid" queries of the program, later additions) carry
    // nothing the judge needs.
  }

  // The live QP (device, qpn), or nullptr.
  QpState* Find(const std::string& device, uint32_t qpn) {
    for (auto it = qps_.rbegin(); it != qps_.rend(); ++it) {
      if (it->live && it->qp.qpn == qpn && it->qp.device == device) return &*it;
    }
    return nullptr;
  }

  QpState& NewQp(const Record& r, bool seen_created) {
    const std::string device = r.Str("device");
    const auto qpn = static_cast<uint32_t>(r.Uint("qpn", 0xffffffff));
    if (QpState* old = Find(device, qpn)) {
      old->live = false;  // its destroy was not seen (or failed); a new QP took the number
    }
    QpState s;
    s.qp.source = ObservedSource::kTrace;
    s.qp.origin = origin_;
    s.qp.host = host_;
    s.qp.pid = pid_;
    s.qp.comm = comm_;
    s.qp.device = device;
    s.qp.qpn = qpn;
    s.qp.type_name = r.StrOr("qp_type", "");
    s.qp.transport = TransportOfTypeName(s.qp.type_name);
    s.qp.state = seen_created ? "RESET" : "";
    s.qp.creation_unseen = !seen_created;
    s.pd = r.StrOr("pd", "");
    qps_.push_back(std::move(s));
    return qps_.back();
  }

  void CreateQp(const Record& r) {
    if (r.Int("result") != 0) {
      out_.notes.push_back(origin_ + ": line " + std::to_string(r.line()) + ": ibv_create_qp (" +
                           r.StrOr("qp_type", "?") + " on " + r.StrOr("device", "?") +
                           ") failed with errno " + std::to_string(r.IntOr("errno", 0)) + " (" +
                           std::strerror(r.IntOr("errno", 0)) + ")");
      return;
    }
    NewQp(r, true);
  }

  void ModifyQp(const Record& r) {
    const std::string device = r.Str("device");
    const auto qpn = static_cast<uint32_t>(r.Uint("qpn", 0xffffffff));
    QpState* s = Find(device, qpn);
    if (s == nullptr) s = &NewQp(r, false);
    ObservedTransition t;
    t.from = r.StrOr("from", "");
    t.to = r.StrOr("to", "");
    t.mask = r.Int("mask");
    t.result = r.Int("result");
    t.sys_errno = r.IntOr("errno", t.result > 0 ? t.result : 0);
    QpAttrs base;
    base.qp_num = qpn;
    t.attrs = ReadAttrs(r.Object("attr"), t.mask, base);
    if (s->qp.port == 0) {
      if (t.mask & IBV_QP_PORT) {
        s->qp.port = t.attrs.port_num;
      } else if (t.mask & IBV_QP_AV) {
        s->qp.port = t.attrs.ah.port_num;
      }
    }
    if (s->pd.empty()) s->pd = r.StrOr("pd", "");
    if (t.result == 0 && !t.to.empty()) s->qp.state = t.to;
    if (s->qp.state.empty() && !t.from.empty()) s->qp.state = t.from;
    if (t.mask & IBV_QP_DEST_QPN) s->qp.dest_qpn = t.attrs.dest_qp_num;
    s->qp.transitions.push_back(std::move(t));
  }

  void DestroyQp(const Record& r) {
    QpState* s = Find(r.Str("device"), static_cast<uint32_t>(r.Uint("qpn", 0xffffffff)));
    if (s == nullptr || r.Int("result") != 0) return;
    s->live = false;
    s->qp.destroyed = true;
  }

  void CreateAh(const Record& r) {
    if (r.Int("result") != 0) return;
    ahs_[r.Str("pd")].push_back(ReadAh(r.Object("ah_attr")));
  }

  void Device(const Record& r) {
    if (r.Int("result") != 0) return;
    DeviceFacts d;
    const std::string guid = r.StrOr("node_guid", "0x0");
    d.node_guid = std::strtoull(guid.c_str(), nullptr, 16);
    d.max_qp_rd_atom = static_cast<uint32_t>(r.OptUint("max_qp_rd_atom", 0xffffffff).value_or(0));
    d.max_qp_init_rd_atom =
        static_cast<uint32_t>(r.OptUint("max_qp_init_rd_atom", 0xffffffff).value_or(0));
    devices_[r.Str("device")] = d;
  }

  void Port(const Record& r) {
    if (r.Int("result") != 0) return;
    PortRecord p;
    PortFacts& f = p.facts;
    f.port_num = static_cast<uint8_t>(r.Uint("port", 0xff));
    f.link_layer = LinkLayerOf(r.StrOr("link_layer", ""));
    f.active = r.StrOr("state", "") == "ACTIVE";
    f.lid = static_cast<uint16_t>(r.OptUint("lid", 0xffff).value_or(0));
    f.lmc = static_cast<uint8_t>(r.OptUint("lmc", 7).value_or(0));
    f.sm_lid = static_cast<uint16_t>(r.OptUint("sm_lid", 0xffff).value_or(0));
    if (r.Has("active_mtu") || r.Has("active_mtu_raw")) f.active_mtu = r.MtuField("active_mtu");
    if (r.Has("max_mtu") || r.Has("max_mtu_raw")) f.max_mtu = r.MtuField("max_mtu");
    f.grh_required = r.BoolOr("grh_required", false);
    if (r.Has("gids") && r.IntOr("gids_result", 0) == 0) {
      const json& gids = r.Array("gids");
      p.gids_known = true;
      for (size_t i = 0; i < gids.size(); ++i) {
        const Record g = r.Element(gids[i], "gids", i);
        GidEntry e;
        e.index = static_cast<uint16_t>(g.Uint("index", 0xffff));
        e.gid = g.GidField("gid");
        e.type = GidTypeOf(g.StrOr("type", ""));
        e.family = FamilyOfGid(e.gid, e.type);
        e.netdev = g.StrOr("netdev", "");
        if (!IsZeroGid(e.gid)) p.gids.push_back(std::move(e));
      }
      // An InfiniBand port's subnet prefix is its GID 0's upper half.
      if (f.link_layer == LinkLayer::kInfiniBand) {
        for (const GidEntry& e : p.gids) {
          if (e.index == 0) f.subnet_prefix = GidSubnetPrefix(e.gid);
        }
      }
    }
    ports_[{r.Str("device"), f.port_num}] = std::move(p);
  }

  void Pkey(const Record& r) {
    if (r.Int("result") != 0 || !r.Has("pkey")) return;
    const auto port = static_cast<uint8_t>(r.Uint("port", 0xff));
    const auto index = static_cast<uint16_t>(r.Uint("index", 0xffff));
    pkeys_[{r.Str("device"), port, index}] = static_cast<uint16_t>(r.Uint("pkey", 0xffff));
  }

  // This side's description and applied attributes, from what was recorded.
  void Describe(QpState& s) {
    ObservedQp& q = s.qp;
    if (q.transport == Transport::kUd) {
      if (auto it = ahs_.find(s.pd); it != ahs_.end() && !s.pd.empty()) {
        q.address_handles = it->second;
      }
    }
    const int mask = AppliedMask(q);
    QpAttrs applied;
    applied.qp_num = q.qpn;
    for (size_t i = 0; i < q.transitions.size(); ++i) {
      if (!InApplied(q, i)) continue;
      const ObservedTransition& t = q.transitions[i];
      // Re-read the bits this transition sent over the accumulated values.
      verbs::CopyQpAttrs(t.attrs, t.mask, applied);
    }
    if (q.port == 0 && !q.address_handles.empty()) q.port = q.address_handles.front().port_num;
    if (q.port != 0 && !(mask & IBV_QP_PORT)) applied.port_num = q.port;
    if (q.transport == Transport::kUd && !q.address_handles.empty()) {
      applied.ah = q.address_handles.front();
    } else if (!(mask & IBV_QP_AV)) {
      applied.ah.port_num = applied.port_num;
    }
    if (!q.transport) {
      q.applied = applied;
      return;
    }

    EndpointInfo e;
    e.transport = *q.transport;
    e.identity.host = q.host;
    e.identity.device = q.device;
    if (auto d = devices_.find(q.device); d != devices_.end()) {
      e.identity.node_guid = d->second.node_guid;
      e.rd_atomic.device_max_qp_rd_atom = d->second.max_qp_rd_atom;
      e.rd_atomic.device_max_qp_init_rd_atom = d->second.max_qp_init_rd_atom;
    }
    e.port.port_num = q.port != 0 ? q.port : applied.port_num;
    if (auto p = ports_.find({q.device, e.port.port_num}); p != ports_.end()) {
      e.port = p->second.facts;
      if (p->second.gids_known) e.gid_table = p->second.gids;
    }
    e.path.path_mtu = (mask & IBV_QP_PATH_MTU) ? applied.path_mtu : e.port.active_mtu;
    e.path.path_mtu_forced = (mask & IBV_QP_PATH_MTU) != 0;
    const AddressVector& ah = applied.ah;
    e.path.use_grh = ah.is_global;
    if (ah.is_global) {
      for (const GidEntry& g : e.gid_table) {
        if (g.index == ah.sgid_index) e.path.sgid = g;
      }
    }
    e.path.sl = ah.sl;
    e.path.traffic_class = ah.traffic_class;
    e.path.hop_limit = ah.hop_limit;
    e.path.flow_label = ah.flow_label;
    e.path.src_path_bits = ah.src_path_bits;
    e.keys.pkey_index = applied.pkey_index;
    if (auto k = pkeys_.find({q.device, e.port.port_num, applied.pkey_index}); k != pkeys_.end()) {
      e.keys.pkey = k->second;
    } else {
      e.keys.pkey = 0;  // not recorded: the P_Key rules report it as unchecked
    }
    e.keys.qkey = applied.qkey;
    e.rd_atomic.max_rd_atomic = applied.max_rd_atomic;
    e.rd_atomic.max_dest_rd_atomic = applied.max_dest_rd_atomic;
    e.qps.push_back({q.qpn, applied.sq_psn, std::nullopt});
    q.endpoint = std::move(e);
    q.applied = applied;
  }

  void Finish() {
    if (!complete_) {
      out_.notes.push_back(origin_ +
                           ": no end record: the process was killed, crashed or is still "
                           "running (its last calls may be missing)");
    }
    for (QpState& s : qps_) {
      Describe(s);
      out_.qps.push_back(std::move(s.qp));
    }
  }

  std::string origin_;
  Observation& out_;
  int pid_ = 0;
  std::string host_;
  std::string comm_;
  bool complete_ = false;
  std::vector<QpState> qps_;
  std::map<std::string, DeviceFacts> devices_;
  std::map<PortKey, PortRecord> ports_;
  std::map<std::tuple<std::string, uint8_t, uint16_t>, uint16_t> pkeys_;
  std::map<std::string, std::vector<AddressVector>> ahs_;  // by PD handle
};

}  // namespace

bool LooksLikeTrace(std::string_view head) {
  const size_t start = head.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return false;
  head.remove_prefix(start);
  constexpr std::string_view kSignature = "{\"qp_trace\":";
  return head.substr(0, kSignature.size()) == kSignature;
}

Result<TraceHeader> ReadTrace(std::string_view text, const std::string& origin, Observation& out) {
  Observation read;
  TraceHeader header;
  try {
    header = Reader(origin, read).Read(text);
  } catch (const Bad& bad) {
    const bool version = bad.what.rfind("trace format version", 0) == 0;
    return Error{version ? ErrorCode::kInvalidArgument : ErrorCode::kProtocol, 0, origin, "",
                 bad.what};
  } catch (const json::exception& e) {
    return Error{ErrorCode::kProtocol, 0, origin, "", std::string("malformed record: ") + e.what()};
  }
  for (ObservedQp& q : read.qps) out.qps.push_back(std::move(q));
  for (std::string& n : read.notes) out.notes.push_back(std::move(n));
  return header;
}

int AppliedMask(const ObservedQp& qp) {
  int mask = 0;
  for (size_t i = 0; i < qp.transitions.size(); ++i) {
    if (InApplied(qp, i)) mask |= qp.transitions[i].mask;
  }
  return mask;
}

}  // namespace qpconnect::trace
