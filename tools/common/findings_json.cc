// SPDX-License-Identifier: MIT
#include "findings_json.h"

namespace qpconnect::tools {

nlohmann::ordered_json TransportsToJson(TransportSet set) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (Transport t : set.ToVector()) a.push_back(TransportName(t));
  return a;
}

nlohmann::ordered_json FindingToJson(const Finding& f) {
  nlohmann::ordered_json transports = TransportsToJson(f.transports);
  nlohmann::ordered_json j = {{"id", f.id},
                              {"severity", SeverityName(f.severity)},
                              {"unchecked", f.unchecked},
                              {"transports", transports},
                              {"attribute", f.attribute},
                              {"direction", DirectionName(f.direction)}};
  j["qp_index"] = f.qp_index ? nlohmann::ordered_json(*f.qp_index) : nlohmann::ordered_json();
  j["more_qps"] = f.more_qps;
  j["local_value"] = f.local_value;
  j["remote_value"] = f.remote_value;
  j["message"] = f.message;
  j["fix"] = f.fix;
  return j;
}

nlohmann::ordered_json FindingsToJson(const std::vector<Finding>& findings) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& f : findings) a.push_back(FindingToJson(f));
  return a;
}

}  // namespace qpconnect::tools
