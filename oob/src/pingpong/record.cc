// SPDX-License-Identifier: MIT
// The pingpong dialect's 52-byte record and its conversion to and from
// EndpointInfo (qpconnect/oob/pingpong.h). Written from the layout described in
// /work/shared/docs/peers.md; the stock parser is sscanf("%x:%x:%x:%s"), which
// accepts nearly anything, so this one is deliberately stricter.
#include <cstdio>
#include <string>

#include "qpconnect/oob/pingpong.h"

namespace qpconnect::oob {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Field layout: offset and width of each hex field in the record.
struct Field {
  const char* name;
  size_t offset;
  size_t width;
};
constexpr Field kLid{"lid", 0, 4};
constexpr Field kQpn{"qpn", 5, 6};
constexpr Field kPsn{"psn", 12, 6};
constexpr Field kGid{"gid", 19, 32};

Error Bad(const std::string& attribute, std::string detail) {
  return Error{
      ErrorCode::kProtocol, 0, "pingpong record", attribute,
      std::move(detail) + " (expected the 52-byte \"lid:qpn:psn:gid\" record of ibv_*_pingpong)"};
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(c));
  return buf;
}

Result<uint32_t> ParseHex(std::string_view rec, const Field& f) {
  uint32_t v = 0;
  for (size_t i = 0; i < f.width; ++i) {
    char c = rec[f.offset + i];
    int d = HexValue(c);
    if (d < 0) {
      return Bad(f.name, std::string(f.name) + ": " + Printable(c) + " at byte " +
                             std::to_string(f.offset + i) + " is not a hex digit");
    }
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  return v;
}

void PutHex(std::string& out, size_t offset, size_t width, uint32_t v) {
  for (size_t i = 0; i < width; ++i) {
    out[offset + width - 1 - i] = kHex[v & 0xf];
    v >>= 4;
  }
}

std::string Hex(uint32_t v, int width) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", width, v);
  return buf;
}

}  // namespace

std::string EncodePingpongRecord(const PingpongRecord& record) {
  std::string out(kPingpongRecordBytes, '\0');
  PutHex(out, kLid.offset, kLid.width, record.lid);
  out[4] = ':';
  PutHex(out, kQpn.offset, kQpn.width, record.qpn & kQpnMask);
  out[11] = ':';
  PutHex(out, kPsn.offset, kPsn.width, record.psn & kPsnMask);
  out[18] = ':';
  for (size_t i = 0; i < record.gid.size(); ++i) {
    out[kGid.offset + 2 * i] = kHex[record.gid[i] >> 4];
    out[kGid.offset + 2 * i + 1] = kHex[record.gid[i] & 0xf];
  }
  return out;  // out[51] stays NUL
}

Result<PingpongRecord> DecodePingpongRecord(std::string_view rec) {
  if (rec.size() != kPingpongRecordBytes) {
    return Bad("length", "got " + std::to_string(rec.size()) + " bytes, not " +
                             std::to_string(kPingpongRecordBytes));
  }
  for (size_t at : {size_t{4}, size_t{11}, size_t{18}}) {
    if (rec[at] != ':') {
      return Bad("separator", "byte " + std::to_string(at) + " is " + Printable(rec[at]) +
                                  ", not ':' (a field has the wrong width)");
    }
  }
  if (rec[51] != '\0') {
    return Bad("terminator", "byte 51 is " + Printable(rec[51]) + ", not the NUL terminator");
  }
  PingpongRecord r;
  auto lid = ParseHex(rec, kLid);
  if (!lid) return std::move(lid).error();
  auto qpn = ParseHex(rec, kQpn);
  if (!qpn) return std::move(qpn).error();
  auto psn = ParseHex(rec, kPsn);
  if (!psn) return std::move(psn).error();
  if (*lid >= 0xc000) {
    return Bad("lid", "lid: " + Hex(*lid, 4) +
                          " is a multicast or the permissive LID, not a port's unicast LID");
  }
  if (*qpn <= 1) {
    return Bad("qpn", "qpn: " + Hex(*qpn, 6) +
                          " is a special QP (QP0/QP1), not a QP a pingpong program creates");
  }
  r.lid = static_cast<uint16_t>(*lid);
  r.qpn = *qpn;
  r.psn = *psn;
  for (size_t i = 0; i < r.gid.size(); ++i) {
    int hi = HexValue(rec[kGid.offset + 2 * i]);
    int lo = HexValue(rec[kGid.offset + 2 * i + 1]);
    if (hi < 0 || lo < 0) {
      size_t at = kGid.offset + 2 * i + (hi < 0 ? 0 : 1);
      return Bad("gid", "gid: " + Printable(rec[at]) + " at byte " + std::to_string(at) +
                            " is not a hex digit");
    }
    r.gid[i] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return r;
}

PingpongRecord RecordFromEndpoint(const EndpointInfo& local) {
  PingpongRecord r;
  r.lid = local.port.lid;
  r.qpn = local.qps.front().qpn & kQpnMask;
  r.psn = local.qps.front().psn & kPsnMask;
  if (local.path.sgid) r.gid = local.path.sgid->gid;
  return r;
}

bool PingpongUsesGrh(const Gid& remote_gid) {
  for (size_t i = 8; i < remote_gid.size(); ++i) {
    if (remote_gid[i] != 0) return true;
  }
  return false;
}

EndpointInfo EndpointFromRecord(const PingpongRecord& record, Transport transport,
                                const Gid& local_gid, Mtu assumed_mtu, std::string host) {
  EndpointInfo e;
  e.transport = transport;
  e.identity.host = std::move(host);
  e.identity.device = "ibv_" + std::string(TransportName(transport)) + "_pingpong peer";
  e.port.lid = record.lid;
  // link_layer stays unspecified: the record does not say, and a stated link
  // layer would make the validator judge a port state nobody told us.
  e.path.path_mtu = assumed_mtu;
  e.path.path_mtu_forced = true;
  e.path.use_grh = PingpongUsesGrh(local_gid);
  e.path.hop_limit = transport == Transport::kUd ? 64 : 1;
  if (!IsZeroGid(record.gid)) {
    GidEntry g;
    g.gid = record.gid;
    e.path.sgid = g;  // its index and type are not on the wire
  }
  if (transport == Transport::kUd) e.keys.qkey = 0x11111111;
  e.qps.push_back(QpEntry{record.qpn, record.psn, std::nullopt});
  return e;
}

}  // namespace qpconnect::oob
