// SPDX-License-Identifier: MIT
// The findings of diagnostic.h as values and text: severity and direction
// names, transport sets, a finding's one line, and counts by severity.
#include "qpconnect/diagnostic.h"

#include <string>

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

}  // namespace qpconnect
