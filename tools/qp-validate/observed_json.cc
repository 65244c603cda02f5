// SPDX-License-Identifier: MIT
#include "observed_json.h"

#include <cctype>
#include <string>

#include "qpconnect/verbs/qp_attrs.h"

namespace qpconnect::tools::qp_validate {

using Json = nlohmann::ordered_json;

Json ObservedQpJson(const ObservedQp& q) {
  std::string transport = q.type_name;
  for (char& c : transport) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Json transitions = Json::array();
  for (const ObservedTransition& t : q.transitions) {
    transitions.push_back({{"from", t.from},
                           {"to", t.to},
                           {"mask", verbs::DecodeMask(t.mask)},
                           {"result", t.result},
                           {"errno", t.sys_errno}});
  }
  Json j = {{"file", q.origin},
            {"source", ObservedSourceName(q.source)},
            {"host", q.host},
            {"pid", q.pid},
            {"comm", q.comm},
            {"device", q.device},
            {"port", q.port},
            {"qpn", q.qpn},
            {"transport", transport},
            {"state", q.state},
            {"destroyed", q.destroyed},
            {"creation_seen", !q.creation_unseen},
            {"dest_qpn", q.dest_qpn ? Json(*q.dest_qpn) : Json()},
            {"transitions", std::move(transitions)}};
  if (!q.samples.empty()) {
    const ObservedSample& s = q.samples.back();
    j["sq_psn"] = s.sq_psn ? Json(*s.sq_psn) : Json();
    j["rq_psn"] = s.rq_psn ? Json(*s.rq_psn) : Json();
    j["process_state"] = s.process_state;
    j["samples"] = q.samples.size();
  }
  return j;
}

}  // namespace qpconnect::tools::qp_validate
