// Private to the verbs layer: the connect step of the owning Session and the
// adopting Connector, over the one transition path (verbs/qp_steps.h), with
// what each keeps of its peer.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "qpconnect/plan.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/qp_steps.h"

namespace qpconnect::verbs {

// What a connected set of QPs keeps of its peer: QP i's remote QPN, and (UD)
// its address handle.
struct PeerHandles {
  std::vector<uint32_t> remote_qpns;
  std::vector<UniqueAh> ahs;
};

// ConnectQps() with `plan`, after which QP i's remote QPN is recorded in
// `peer` and, on UD, the peer's address handle made in `pd_of(i)` through
// `env` (a refusal with `hint` appended). `peer` is cleared first; `times`
// holds what was done on every path. Errors as ConnectQps() and CreateAh.
Result<void> ConnectToPlan(std::span<QpControl* const> qps, Transport transport,
                           const ConnectionPlan& plan, const std::string& hint, QpEnv& env,
                           const std::function<ibv_pd&(size_t)>& pd_of, const ProgressFn& progress,
                           PeerHandles& peer, ConnectTimes& times);

}  // namespace qpconnect::verbs
