// SPDX-License-Identifier: MIT
// Text of the values the rules report (rules.h): hexadecimal QPNs, PSNs and
// LIDs, MTUs, GID entries. The findings themselves:
// qpconnect/src/core/diagnostic.cc.
#include <cstdio>
#include <string>

#include "rules.h"

namespace qpconnect {

namespace validate_internal {

std::string Hex(uint64_t value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(value));
  return buf;
}

std::string Qpn(uint32_t qpn) { return Hex(qpn, 6); }
std::string Psn(uint32_t psn) { return Hex(psn, 6); }
std::string Lid(uint32_t lid) { return Hex(lid, 4) + " (" + Dec(lid) + ")"; }
std::string Dec(uint64_t value) { return std::to_string(value); }

std::string MtuText(Mtu mtu) {
  if (IsValidMtu(mtu)) return std::to_string(MtuBytes(mtu));
  return "invalid (" + std::to_string(static_cast<unsigned>(mtu)) + ")";
}

GidFamily FamilyOf(const GidEntry& e) {
  if (e.family != GidFamily::kUnspecified) return e.family;
  return IsIpv4MappedGid(e.gid) ? GidFamily::kIpv4 : GidFamily::kIpv6;
}

std::string GidEntryText(const GidEntry& e) {
  std::string out = std::to_string(e.index);
  out += ' ';
  out += GidToString(e.gid);
  out += " (";
  out += GidTypeName(e.type);
  if (e.type != GidType::kIb) {
    out += ", ";
    out += GidFamilyName(FamilyOf(e));
  }
  out += ')';
  return out;
}

std::string SgidText(uint16_t index, const GidEntry* e) {
  if (e != nullptr) return GidEntryText(*e);
  return "index " + std::to_string(index);
}

}  // namespace validate_internal
}  // namespace qpconnect
