// SPDX-License-Identifier: MIT
#include "codec/wire_ranges.h"

#include <cstdio>

#include "qpconnect/oob/codec.h"

namespace qpconnect::oob::internal {
namespace {

// Checks `v` <= `max`, naming `field` with a hex value (QPNs, PSNs, labels).
Result<void> CheckBits(uint64_t v, int bits, const std::string& field) {
  if (v >> bits != 0) return ExceedsBitsError(field, v, bits);
  return Ok();
}

Result<void> CheckRange(int64_t v, int64_t lo, int64_t hi, const std::string& field) {
  if (v < lo || v > hi) return OutOfRangeError(field, v, lo, hi);
  return Ok();
}

// Length of the UTF-8 sequence starting at text[i], or 0 if it is malformed
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  size_t n = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xe0) == 0xc0) {
    n = 2;
    cp = b0 & 0x1fu;
    min = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3;
    cp = b0 & 0x0fu;
    min = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4;
    cp = b0 & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

Result<void> CheckGidEntry(const GidEntry& e, const std::string& field) {
  QPC_TRY(CheckGidType(static_cast<int64_t>(e.type), field + ".type"));
  QPC_TRY(CheckGidFamily(static_cast<int64_t>(e.family), field + ".family"));
  QPC_TRY(CheckText(e.netdev, kMaxNetdevBytes, field + ".netdev"));
  // An IPv4-mapped GID's address is IPv4: at most 32 bits of prefix.
  QPC_TRY(CheckRange(e.prefix_len, 0, IsIpv4MappedGid(e.gid) ? 32 : 128, field + ".prefix_length"));
  return Ok();
}

std::string Indexed(const std::string& prefix, const char* list, size_t i, const char* name) {
  return prefix + list + "[" + std::to_string(i) + "]." + name;
}

}  // namespace

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

Error FieldError(std::string field, std::string_view what) {
  Error e;
  e.code = ErrorCode::kProtocol;
  e.detail = field;
  e.detail += ' ';
  e.detail += what;
  e.attribute = std::move(field);
  return e;
}

Error ExceedsBitsError(std::string field, uint64_t value, int bits) {
  return FieldError(std::move(field), Hex(value) + " exceeds " + std::to_string(bits) + " bits");
}

Error OutOfRangeError(std::string field, int64_t value, int64_t lo, int64_t hi) {
  return FieldError(std::move(field), std::to_string(value) + " is out of range " +
                                          std::to_string(lo) + ".." + std::to_string(hi));
}

Error BadEnumError(std::string field, int64_t value, std::string_view what,
                   std::string_view valid) {
  std::string s = std::to_string(value) + " is not a valid ";
  s += what;
  s += " (";
  s += valid;
  s += ")";
  return FieldError(std::move(field), s);
}

Error TooManyError(std::string field, size_t count, size_t cap) {
  return FieldError(std::move(field), "has " + std::to_string(count) +
                                          " entries, more than the cap of " + std::to_string(cap));
}

Result<void> CheckTransport(int64_t v, const std::string& field) {
  if (v < 1 || v > 3) return BadEnumError(field, v, "transport", "1=rc, 2=uc, 3=ud");
  return Ok();
}

Result<void> CheckLinkLayer(int64_t v, const std::string& field) {
  if (v < 0 || v > 2) {
    return BadEnumError(field, v, "link layer", "0=unspecified, 1=infiniband, 2=ethernet");
  }
  return Ok();
}

Result<void> CheckMtu(int64_t v, const std::string& field) {
  if (v < 0 || v > 5) {
    return BadEnumError(field, v, "MTU", "0=unspecified, 1..5 = 256..4096 bytes");
  }
  return Ok();
}

Result<void> CheckGidType(int64_t v, const std::string& field) {
  if (v < 0 || v > 3) {
    return BadEnumError(field, v, "GID type", "0=unspecified, 1=ib, 2=roce-v1, 3=roce-v2");
  }
  return Ok();
}

Result<void> CheckGidChoice(int64_t v, const std::string& field) {
  if (v < 0 || v > 2) {
    return BadEnumError(field, v, "GID choice", "0=own, 1=joint, 2=pinned");
  }
  return Ok();
}

Result<void> CheckGidFamily(int64_t v, const std::string& field) {
  if (v < 0 || v > 2) {
    return BadEnumError(field, v, "GID family", "0=unspecified, 1=ipv4, 2=ipv6");
  }
  return Ok();
}

Result<void> CheckText(std::string_view text, size_t cap, const std::string& field) {
  if (text.size() > cap) {
    return FieldError(field, "is " + std::to_string(text.size()) +
                                 " bytes long, more than the cap of " + std::to_string(cap));
  }
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      return FieldError(field,
                        "contains control character " + Hex(c) + " at byte " + std::to_string(i));
    }
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return FieldError(field, "is not valid UTF-8 at byte " + std::to_string(i));
    i += n;
  }
  return Ok();
}

Result<void> CheckEndpointRanges(const EndpointInfo& info, const std::string& prefix) {
  QPC_TRY(CheckTransport(static_cast<int64_t>(info.transport), prefix + "transport"));
  QPC_TRY(CheckText(info.identity.host, kMaxHostBytes, prefix + "identity.host"));
  QPC_TRY(CheckText(info.identity.device, kMaxDeviceBytes, prefix + "identity.device"));

  const PortFacts& port = info.port;
  QPC_TRY(CheckRange(port.port_num, 1, 255, prefix + "port.port_num"));
  QPC_TRY(CheckLinkLayer(static_cast<int64_t>(port.link_layer), prefix + "port.link_layer"));
  QPC_TRY(CheckRange(port.lmc, 0, kMaxLmc, prefix + "port.lmc"));
  QPC_TRY(CheckMtu(static_cast<int64_t>(port.active_mtu), prefix + "port.active_mtu"));
  QPC_TRY(CheckMtu(static_cast<int64_t>(port.max_mtu), prefix + "port.max_mtu"));

  const PathParams& path = info.path;
  QPC_TRY(CheckMtu(static_cast<int64_t>(path.path_mtu), prefix + "path.path_mtu"));
  if (path.sgid) QPC_TRY(CheckGidEntry(*path.sgid, prefix + "path.sgid"));
  QPC_TRY(CheckRange(path.sl, 0, kMaxSl, prefix + "path.sl"));
  QPC_TRY(CheckBits(path.flow_label, 20, prefix + "path.flow_label"));
  QPC_TRY(CheckRange(path.src_path_bits, 0, kMaxSrcPathBits, prefix + "path.src_path_bits"));

  if (info.gid_table.size() > kMaxGidTableEntries) {
    return TooManyError(prefix + "gid_table", info.gid_table.size(), kMaxGidTableEntries);
  }
  for (size_t i = 0; i < info.gid_table.size(); ++i) {
    QPC_TRY(CheckGidEntry(info.gid_table[i], prefix + "gid_table[" + std::to_string(i) + "]"));
  }

  if (info.netdevs.size() > kMaxNetdevs) {
    return TooManyError(prefix + "netdevs", info.netdevs.size(), kMaxNetdevs);
  }
  for (size_t i = 0; i < info.netdevs.size(); ++i) {
    const NetdevInfo& n = info.netdevs[i];
    QPC_TRY(CheckText(n.name, kMaxNetdevBytes, Indexed(prefix, "netdevs", i, "name")));
    QPC_TRY(CheckRange(n.vlan_id, 0, kMaxVlanId, Indexed(prefix, "netdevs", i, "vlan_id")));
  }

  if (info.qps.empty()) {
    return FieldError(prefix + "qps", "is empty: a side must publish at least one QP");
  }
  if (info.qps.size() > kMaxWireQps) {
    return TooManyError(prefix + "qps", info.qps.size(), kMaxWireQps);
  }
  for (size_t i = 0; i < info.qps.size(); ++i) {
    const QpEntry& qp = info.qps[i];
    if (qp.qpn > kQpnMask) return ExceedsBitsError(Indexed(prefix, "qps", i, "qpn"), qp.qpn, 24);
    if (qp.psn > kPsnMask) return ExceedsBitsError(Indexed(prefix, "qps", i, "psn"), qp.psn, 24);
  }
  return Ok();
}

Result<void> CheckPlanRanges(const ConnectionPlan& plan, const std::string& prefix) {
  QPC_TRY(CheckTransport(static_cast<int64_t>(plan.transport), prefix + "transport"));
  if (plan.qps.size() > kMaxWireQps) {
    return TooManyError(prefix + "qps", plan.qps.size(), kMaxWireQps);
  }
  for (size_t i = 0; i < plan.qps.size(); ++i) {
    const QpAttrs& a = plan.qps[i];
    const std::string at = prefix + "qps[" + std::to_string(i) + "].";
    QPC_TRY(CheckBits(a.qp_num, 24, at + "qp_num"));
    QPC_TRY(CheckRange(a.port_num, 1, 255, at + "port_num"));
    QPC_TRY(CheckMtu(static_cast<int64_t>(a.path_mtu), at + "path_mtu"));
    QPC_TRY(CheckBits(a.dest_qp_num, 24, at + "dest_qp_num"));
    QPC_TRY(CheckBits(a.rq_psn, 24, at + "rq_psn"));
    QPC_TRY(CheckBits(a.sq_psn, 24, at + "sq_psn"));
    QPC_TRY(CheckRange(a.min_rnr_timer, 0, kMaxRnrTimer, at + "min_rnr_timer"));
    QPC_TRY(CheckRange(a.timeout, 0, kMaxTimeout, at + "timeout"));
    QPC_TRY(CheckRange(a.retry_cnt, 0, kMaxRetry, at + "retry_cnt"));
    QPC_TRY(CheckRange(a.rnr_retry, 0, kMaxRetry, at + "rnr_retry"));
    QPC_TRY(CheckRange(a.ah.sl, 0, kMaxSl, at + "ah.sl"));
    QPC_TRY(CheckRange(a.ah.src_path_bits, 0, kMaxSrcPathBits, at + "ah.src_path_bits"));
    QPC_TRY(CheckRange(a.ah.port_num, 1, 255, at + "ah.port_num"));
    QPC_TRY(CheckBits(a.ah.flow_label, 20, at + "ah.flow_label"));
  }
  return Ok();
}

}  // namespace qpconnect::oob::internal
