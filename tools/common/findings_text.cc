// SPDX-License-Identifier: MIT
#include "findings_text.h"

namespace qpconnect::tools {

std::string FindingWhere(const Finding& f) {
  std::string w = f.direction == Direction::kBoth
                      ? "both sides"
                      : std::string(DirectionName(f.direction)) + " side";
  if (f.qp_index) {
    w += ", QP " + std::to_string(*f.qp_index);
    if (f.more_qps != 0) w += " and " + std::to_string(f.more_qps) + " more";
  } else if (f.more_qps != 0) {
    w += ", " + std::to_string(f.more_qps) + " more QPs";
  }
  return w;
}

void PrintFindingsText(std::ostream& out, const std::vector<Finding>& findings,
                       std::string_view indent) {
  for (const Finding& f : findings) {
    std::string sev = SeverityName(f.severity);
    sev.resize(8, ' ');
    out << indent << sev << f.id << "  " << f.attribute << "  [" << FindingWhere(f) << "]";
    if (f.unchecked) {
      out << "  " << f.message << "\n";
      continue;
    }
    out << "\n" << indent << "        " << f.message << "\n";
    if (!f.local_value.empty() || !f.remote_value.empty()) {
      out << indent << "        local: " << (f.local_value.empty() ? "-" : f.local_value)
          << "   remote: " << (f.remote_value.empty() ? "-" : f.remote_value) << "\n";
    }
    if (!f.fix.empty()) out << indent << "        fix: " << f.fix << "\n";
  }
}

std::string FindingCounts(size_t errors, size_t warnings, size_t infos) {
  return std::to_string(errors) + (errors == 1 ? " error, " : " errors, ") +
         std::to_string(warnings) + (warnings == 1 ? " warning, " : " warnings, ") +
         std::to_string(infos) + (infos == 1 ? " note" : " notes");
}

}  // namespace qpconnect::tools
