// Text of findings and of the values rules report.
#include <cstdio>
#include <string>

#include "qpconnect/diagnostic.h"
#include "rules.h"

namespace qpconnect {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "unknown";
}

const char* DirectionName(Direction d) {
  switch (d) {
    case Direction::kBoth:
      return "both";
    case Direction::kLocal:
      return "local";
    case Direction::kRemote:
      return "remote";
  }
  return "unknown";
}

std::vector<Transport> TransportSet::ToVector() const {
  std::vector<Transport> out;
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    if (Has(t)) out.push_back(t);
  }
  return out;
}

std::string TransportSet::ToString() const {
  std::string out;
  for (Transport t : ToVector()) {
    if (!out.empty()) out += ',';
    out += TransportName(t);
  }
  return out;
}

std::string FindingToString(const Finding& f) {
  std::string out = SeverityName(f.severity);
  out += ' ';
  out += f.id;
  if (!f.attribute.empty()) {
    out += ' ';
    out += f.attribute;
  }
  out += " [";
  out += DirectionName(f.direction);
  if (f.qp_index) {
    out += ", qp ";
    out += std::to_string(*f.qp_index);
  }
  if (f.more_qps != 0) {
    out += ", +";
    out += std::to_string(f.more_qps);
    out += " more qps";
  }
  out += "]: ";
  out += f.message;
  if (!f.local_value.empty() || !f.remote_value.empty()) {
    out += " (local=";
    out += f.local_value.empty() ? "-" : f.local_value;
    out += " remote=";
    out += f.remote_value.empty() ? "-" : f.remote_value;
    out += ')';
  }
  if (!f.fix.empty()) {
    out += "; fix: ";
    out += f.fix;
  }
  return out;
}

bool HasErrors(const std::vector<Finding>& findings) {
  return CountSeverity(findings, Severity::kError) != 0;
}

size_t CountSeverity(const std::vector<Finding>& findings, Severity s) {
  size_t n = 0;
  for (const Finding& f : findings) {
    if (f.severity == s) ++n;
  }
  return n;
}

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
