// SPDX-License-Identifier: MIT
// SubnAdm PathRecord codec and resolver. Byte offsets follow IBA 1.3 vol. 1:
// the common MAD header (13.4.2: 24 bytes), the RMPP header (13.6.2.1: 12
// bytes), the SA header (15.2.1.1: SM_Key, AttributeOffset, ComponentMask; 20
// bytes), then records; PathRecord's 64 bytes and component-mask bits are
// table 15.2.5.16.
#include "qpconnect/sa/path_resolver.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace qpconnect::sa {
namespace {

constexpr size_t kRmppOffset = 24;
constexpr size_t kSaHeaderOffset = 36;
constexpr size_t kSaDataOffset = 56;
constexpr size_t kPathRecordSize = 64;
constexpr uint8_t kRmppFlagActive = 0x01;
constexpr uint8_t kRmppFlagFirst = 0x02;

// PathRecord ComponentMask bits (table 15.2.5.16, by field order).
constexpr uint64_t kCompDgid = 1ull << 2;
constexpr uint64_t kCompSgid = 1ull << 3;
constexpr uint64_t kCompDlid = 1ull << 4;
constexpr uint64_t kCompSlid = 1ull << 5;
constexpr uint64_t kCompReversible = 1ull << 11;
constexpr uint64_t kCompNumbPath = 1ull << 12;
constexpr uint64_t kCompPkey = 1ull << 13;
constexpr uint64_t kCompSl = 1ull << 15;

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t Get32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

std::string Hex(uint64_t v, int width) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

PathRecord DecodeRecord(const uint8_t* r) {
  PathRecord pr;
  pr.service_id = Get64(r);
  std::memcpy(pr.dgid.data(), r + 8, 16);
  std::memcpy(pr.sgid.data(), r + 24, 16);
  pr.dlid = Get16(r + 40);
  pr.slid = Get16(r + 42);
  const uint32_t hop_flow = Get32(r + 44);
  pr.raw_traffic = (hop_flow >> 31) != 0;
  pr.flow_label = (hop_flow >> 8) & 0xfffff;
  pr.hop_limit = static_cast<uint8_t>(hop_flow);
  pr.traffic_class = r[48];
  pr.reversible = (r[49] & 0x80) != 0;
  pr.numb_path = r[49] & 0x7f;
  pr.pkey = Get16(r + 50);
  const uint16_t qos_sl = Get16(r + 52);
  pr.qos_class = static_cast<uint16_t>(qos_sl >> 4);
  pr.sl = static_cast<uint8_t>(qos_sl & 0xf);
  pr.mtu_selector = r[54] >> 6;
  pr.mtu = static_cast<Mtu>(r[54] & 0x3f);
  pr.rate_selector = r[55] >> 6;
  pr.rate = r[55] & 0x3f;
  pr.packet_lifetime_selector = r[56] >> 6;
  pr.packet_lifetime = r[56] & 0x3f;
  pr.preference = r[57];
  return pr;
}

Error QueryError(ErrorCode code, std::string attribute, std::string detail) {
  return Error(code, 0, "SA PathRecord query", std::move(attribute), std::move(detail));
}

std::string Describe(const SaPort& port, const PathQuery& q) {
  std::string s = port.ca_name + " port " + std::to_string(port.port_num) + " (LID " +
                  std::to_string(port.lid) + ") to ";
  s += q.dlid ? "LID " + std::to_string(*q.dlid) : GidToString(*q.dgid);
  if (q.pkey) s += " P_Key " + Hex(*q.pkey, 4);
  if (q.sl) s += " SL " + std::to_string(*q.sl);
  return s;
}

// One query with its tries. Returns the reply (any status) or a transport /
// timeout / decode error.
Result<PathReply> Ask(MadChannel& channel, const SaPort& port, const PathQuery& query,
                      const ResolveOptions& options, uint64_t& tid,
                      std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  int sent = 0;
  std::string last_drop;
  for (int attempt = 0; attempt < std::max(options.tries, 1); ++attempt) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    const uint64_t this_tid = tid++;
    auto mad = EncodePathQuery(port, query, this_tid);
    if (auto s = channel.Send(mad); !s) return s.error();
    ++sent;
    const Clock::time_point try_end = std::min(deadline, Clock::now() + options.try_timeout);
    while (true) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(try_end - Clock::now());
      if (left.count() <= 0) break;
      auto got = channel.Receive(left);
      if (!got) {
        if (got.error().code == ErrorCode::kTimeout) break;
        return got.error();
      }
      auto reply = DecodePathReply(got->data(), got->size());
      if (!reply) return reply.error();
      // The kernel owns the TID's upper 32 bits (its agent id); ours are the rest.
      if ((reply->tid & 0xffffffffu) != (this_tid & 0xffffffffu)) {
        last_drop = "; dropped a reply with stale TID " + Hex(reply->tid, 16);
        continue;
      }
      return reply;
    }
  }
  return QueryError(ErrorCode::kTimeout, "sa",
                    "no reply from the SA at LID " + std::to_string(port.sm_lid) + " in " +
                        std::to_string(sent) + " tries of " +
                        std::to_string(options.try_timeout.count()) + " ms (deadline " +
                        std::to_string(options.deadline.count()) + " ms) for " +
                        Describe(port, query) + last_drop);
}

}  // namespace

std::array<uint8_t, kMadSize> EncodePathQuery(const SaPort& port, const PathQuery& query,
                                              uint64_t tid) {
  std::array<uint8_t, kMadSize> m{};
  m[0] = 1;  // BaseVersion
  m[1] = kMgmtClassSubnAdm;
  m[2] = 2;  // ClassVersion
  m[3] = kMethodGetTable;
  Put64(&m[8], tid);
  Put16(&m[16], kAttrPathRecord);
  // RMPP header: version 1, inactive (the request is one MAD).
  m[kRmppOffset] = 1;
  // SA header: SM_Key 0 (untrusted), AttributeOffset 0 in a request.
  uint64_t mask = kCompReversible | kCompNumbPath;
  uint8_t* r = &m[kSaDataOffset];
  if (query.dlid) {
    mask |= kCompDlid | kCompSlid;
    Put16(r + 40, *query.dlid);
    Put16(r + 42, port.lid);
  } else if (query.dgid) {
    mask |= kCompDgid | kCompSgid;
    std::memcpy(r + 8, query.dgid->data(), 16);
    std::memcpy(r + 24, port.gid.data(), 16);
  }
  r[49] = 0x80 | 1;  // reversible, one path
  if (query.pkey) {
    mask |= kCompPkey;
    Put16(r + 50, *query.pkey);
  }
  if (query.sl) {
    mask |= kCompSl;
    Put16(r + 52, static_cast<uint16_t>(*query.sl & 0xf));
  }
  Put64(&m[kSaHeaderOffset + 12], mask);
  return m;
}

Result<PathReply> DecodePathReply(const uint8_t* mad, size_t length) {
  auto bad = [](std::string attribute, std::string detail) {
    return Error(ErrorCode::kProtocol, 0, "SA PathRecord reply", std::move(attribute),
                 std::move(detail));
  };
  if (mad == nullptr || length < kSaDataOffset) {
    return bad("length", std::to_string(length) + " bytes, shorter than the " +
                             std::to_string(kSaDataOffset) + "-byte SA header");
  }
  if (mad[1] != kMgmtClassSubnAdm)
    return bad("mgmt_class", Hex(mad[1], 2) + ", not SubnAdm (0x03)");
  if (mad[3] != kMethodGetTableResp) {
    return bad("method", Hex(mad[3], 2) + ", not GetTableResp (0x92)");
  }
  PathReply reply;
  reply.tid = Get64(mad + 8);
  reply.status = Get16(mad + 4);
  const uint16_t attr = Get16(mad + 16);
  if (attr != kAttrPathRecord) {
    return bad("attribute_id", Hex(attr, 4) + ", not PathRecord (0x0035)");
  }
  if (reply.status != 0) return reply;  // an error reply carries no records
  const uint16_t attr_offset = Get16(mad + kSaHeaderOffset + 8);
  // OpenSM sends AttributeOffset 0 with an empty table.
  if (attr_offset == 0) return reply;
  if (attr_offset != kPathRecordSize / 8) {
    return bad("attribute_offset", std::to_string(attr_offset) + " words, not PathRecord's 8");
  }
  size_t data = length - kSaDataOffset;
  const uint8_t flags = mad[kRmppOffset + 2] & 0x7;
  if ((flags & kRmppFlagActive) && (flags & kRmppFlagFirst)) {
    // PayloadLength of the first segment: the SA header and all records.
    const uint32_t payload = Get32(mad + kRmppOffset + 8);
    if (payload < kSaDataOffset - kSaHeaderOffset) {
      return bad("payload_length", std::to_string(payload) + " bytes, less than the SA header");
    }
    data = std::min<size_t>(data, payload - (kSaDataOffset - kSaHeaderOffset));
  }
  for (size_t off = 0; off + kPathRecordSize <= data; off += kPathRecordSize) {
    reply.records.push_back(DecodeRecord(mad + kSaDataOffset + off));
  }
  return reply;
}

std::string MadStatusText(uint16_t status) {
  std::string text;
  switch (status >> 8) {
    case 0:
      break;
    case 1:
      text = "SA out of resources";
      break;
    case 2:
      text = "request invalid";
      break;
    case 3:
      text = "no records";
      break;
    case 4:
      text = "too many records";
      break;
    case 5:
      text = "invalid GID";
      break;
    case 6:
      text = "insufficient components";
      break;
    case 7:
      text = "request denied";
      break;
    default:
      text = "SA status " + std::to_string(status >> 8);
      break;
  }
  const unsigned common = (status >> 2) & 0x7;
  const char* common_text[] = {"",
                               "bad base/class version",
                               "method not supported",
                               "method/attribute combination not supported",
                               "reserved common status 4",
                               "reserved common status 5",
                               "reserved common status 6",
                               "invalid attribute or modifier value"};
  if (common != 0) text += (text.empty() ? "" : ", ") + std::string(common_text[common]);
  if (status & 0x1) text += (text.empty() ? "" : ", ") + std::string("busy");
  if (status & 0x2) text += (text.empty() ? "" : ", ") + std::string("redirect required");
  if (text.empty()) text = "success";
  return text + " (" + Hex(status, 4) + ")";
}

Result<PathRecord> ResolvePath(MadChannel& channel, const SaPort& port, const PathQuery& query,
                               const ResolveOptions& options) {
  if (query.dlid.has_value() == query.dgid.has_value()) {
    return QueryError(ErrorCode::kInvalidArgument, query.dlid ? "dgid" : "dlid",
                      "give exactly one destination: a LID or a GID");
  }
  if (port.link_layer == LinkLayer::kEthernet) {
    return QueryError(ErrorCode::kIncompatible, "link_layer",
                      port.ca_name + " port " + std::to_string(port.port_num) +
                          " is Ethernet (RoCE): it has no subnet administrator; paths come "
                          "from the GID and the IP route there");
  }
  if (port.state != 4 || port.sm_lid == 0) {
    return QueryError(ErrorCode::kNotFound, "sm_lid",
                      "no subnet manager: " + port.ca_name + " port " +
                          std::to_string(port.port_num) + " is in state " +
                          std::to_string(port.state) + " (4 = ACTIVE) with SM LID " +
                          std::to_string(port.sm_lid) + "; start opensm on the fabric");
  }
  const auto deadline = std::chrono::steady_clock::now() + options.deadline;
  uint64_t tid = options.first_tid;
  auto reply = Ask(channel, port, query, options, tid, deadline);
  if (!reply) return std::move(reply).error();
  const uint16_t kNoRecords = 0x0300;
  if (reply->status != 0 && reply->status != kNoRecords) {
    return QueryError(ErrorCode::kProtocol, "status",
                      "the SA refused the query: " + MadStatusText(reply->status) + " for " +
                          Describe(port, query));
  }
  if (!reply->records.empty()) return reply->records.front();

  // No path. With a P_Key asked for, ask again without it: a path then means
  // the partition refused this one.
  if (query.pkey) {
    PathQuery any = query;
    any.pkey.reset();
    auto again = Ask(channel, port, any, options, tid, deadline);
    if (again && again->status == 0 && !again->records.empty()) {
      return QueryError(ErrorCode::kIncompatible, "pkey",
                        "partition refused: the SA has a path from " + Describe(port, any) +
                            " in P_Key " + Hex(again->records.front().pkey, 4) +
                            ", but none in P_Key " + Hex(*query.pkey, 4) +
                            " (one end is not a member of that partition)");
    }
  }
  return QueryError(ErrorCode::kNotFound, "path",
                    "the SA has no path from " + Describe(port, query) +
                        " (no such destination, or it shares no partition with this port)");
}

Result<PathQuery> ParseDestination(const std::string& text) {
  PathQuery q;
  if (text.find(':') != std::string::npos) {
    Gid gid{};
    if (inet_pton(AF_INET6, text.c_str(), gid.data()) != 1) {
      return Error(ErrorCode::kInvalidArgument, 0, "parse destination", "dgid",
                   "'" + text + "' is not a GID (IPv6 notation, e.g. fe80::10:3)");
    }
    q.dgid = gid;
    return q;
  }
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  const char* allowed = hex ? "0123456789abcdefABCDEF" : "0123456789";
  if (digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of(allowed) != std::string::npos) {
    return Error(ErrorCode::kInvalidArgument, 0, "parse destination", "dlid",
                 "'" + text + "' is neither a LID (decimal or 0x hex) nor a GID");
  }
  const unsigned long v = std::stoul(digits, nullptr, hex ? 16 : 10);
  if (v == 0 || v > 0xbfff) {
    return Error(ErrorCode::kInvalidArgument, 0, "parse destination", "dlid",
                 "LID " + text + " is not a unicast LID (1..0xbfff)");
  }
  q.dlid = static_cast<uint16_t>(v);
  return q;
}

}  // namespace qpconnect::sa
