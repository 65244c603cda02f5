// SPDX-License-Identifier: MIT
#include "observed_json.h"

#include <cctype>
#include <string>

#include "json_text.h"
#include "qpconnect/verbs/qp_attrs.h"

namespace qpconnect::tools::qp_validate {

using Json = nlohmann::ordered_json;

void AppendObservedQpJson(const ObservedQp& q, std::string* out) {
  auto key = [&](std::string_view k) {
    out->push_back(',');
    AppendJsonKey(k, out);
  };
  *out += "{";
  AppendJsonKey("file", out);
  AppendJsonString(q.origin, out);
  key("source");
  AppendJsonString(ObservedSourceName(q.source), out);
  key("host");
  AppendJsonString(q.host, out);
  key("pid");
  AppendJsonNumber(q.pid, out);
  key("comm");
  AppendJsonString(q.comm, out);
  key("device");
  AppendJsonString(q.device, out);
  key("port");
  AppendJsonNumber(q.port, out);
  key("qpn");
  AppendJsonNumber(q.qpn, out);
  key("transport");
  std::string transport = q.type_name;
  for (char& c : transport) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  AppendJsonString(transport, out);
  key("state");
  AppendJsonString(q.state, out);
  key("destroyed");
  AppendJsonBool(q.destroyed, out);
  key("creation_seen");
  AppendJsonBool(!q.creation_unseen, out);
  key("dest_qpn");
  AppendJsonOptional(q.dest_qpn, out);
  key("transitions");
  out->push_back('[');
  for (size_t i = 0; i < q.transitions.size(); ++i) {
    const ObservedTransition& t = q.transitions[i];
    if (i != 0) out->push_back(',');
    out->push_back('{');
    AppendJsonKey("from", out);
    AppendJsonString(t.from, out);
    key("to");
    AppendJsonString(t.to, out);
    key("mask");
    AppendJsonString(verbs::DecodeMask(t.mask), out);
    key("result");
    AppendJsonNumber(t.result, out);
    key("errno");
    AppendJsonNumber(t.sys_errno, out);
    out->push_back('}');
  }
  out->push_back(']');
  if (!q.samples.empty()) {
    const ObservedSample& s = q.samples.back();
    key("sq_psn");
    AppendJsonOptional(s.sq_psn, out);
    key("rq_psn");
    AppendJsonOptional(s.rq_psn, out);
    key("process_state");
    AppendJsonString(s.process_state, out);
    key("samples");
    AppendJsonNumber(q.samples.size(), out);
  }
  out->push_back('}');
}

Json ObservedQpJson(const ObservedQp& q) {
  std::string text;
  AppendObservedQpJson(q, &text);
  return Json::parse(text);
}

}  // namespace qpconnect::tools::qp_validate
