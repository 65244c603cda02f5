// SPDX-License-Identifier: MIT
#include "qpconnect/observe/dump.h"

#include <cctype>
#include <utility>

#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_state_table.h"

namespace qpconnect {
namespace {

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void AddDump(const EndpointInfo& local, const std::optional<ConnectionPlan>& plan,
             const std::string& origin, Observation* out) {
  const EndpointInfo& e = local;
  for (size_t i = 0; i < e.qps.size(); ++i) {
    ObservedQp q;
    q.source = ObservedSource::kDump;
    q.origin = origin;
    q.host = e.identity.host;
    q.device = e.identity.device;
    q.port = e.port.port_num;
    q.qpn = e.qps[i].qpn;
    q.transport = e.transport;
    q.type_name = Upper(TransportName(e.transport));
    q.endpoint = e;
    q.endpoint->qps = {e.qps[i]};
    if (plan && i < plan->qps.size()) {
      q.applied = plan->qps[i];
      if (e.transport != Transport::kUd) q.dest_qpn = q.applied->dest_qp_num;
      // The dump holds the plan qp-connect applied, with the required masks
      // of ibv_modify_qp(3): what the validator's trace judgement reads.
      using verbs::QpState;
      const std::pair<QpState, QpState> steps[] = {{QpState::kReset, QpState::kInit},
                                                   {QpState::kInit, QpState::kRtr},
                                                   {QpState::kRtr, QpState::kRts}};
      for (const auto& [from, to] : steps) {
        ObservedTransition t;
        t.from = verbs::QpStateName(from);
        t.to = verbs::QpStateName(to);
        t.mask = verbs::FindTransition(e.transport, from, to)->required;
        t.attrs = *q.applied;
        q.transitions.push_back(std::move(t));
      }
    }
    out->qps.push_back(std::move(q));
  }
}

}  // namespace qpconnect
