// The connector's per-QP steps over a QpControl: RESET->INIT, then
// INIT->RTR->RTS from a plan entry. Shared by the owning Session and the
// connector's adopted mode, so both apply the same masks and explain a refusal
// the same way (verbs/transition.h).
//
// Thread-safety: as the QpControl.
#pragma once

#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"
#include "qpconnect/verbs/qp_control.h"

namespace qpconnect::verbs {

// The Q_Key a UD QP puts in its send WRs under `plan`: the plan's remote_qkey
// when it overrides, else the QP's own Q_Key (plan.qps[0].qkey) — so that a
// Q_Key mismatch shows as dropped datagrams, as the qkey-mismatch rule
// predicts. `fallback` when the plan is empty.
uint32_t UdSendQkey(const ConnectionPlan& plan, uint32_t fallback);

// The access flags a connector QP gets at INIT: RC local + remote write +
// remote read; UC local + remote write; UD local write.
unsigned DefaultAccessFlags(Transport transport);

// RESET->INIT with `attrs.port_num`, `attrs.pkey_index` and access flags (RC,
// UC) or `attrs.qkey` (UD). kVerbs naming transition, mask and values.
Result<void> MoveToInit(QpControl& qp, Transport transport, const QpAttrs& attrs,
                        unsigned access_flags);

// INIT->RTR->RTS with the plan entry `attrs`; `hint` is appended to a refusal
// (e.g. "the validator reported errors above"). kInvalidArgument, before
// anything reaches the device, for an address vector ibv_ah_attr cannot carry
// (CheckAddressVector); kVerbs for a refusal.
Result<void> MoveToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint = {});

// The two halves of MoveToRts(), for callers that time them apart: INIT->RTR
// (with the address vector check), then RTR->RTS. Same errors.
Result<void> MoveToRtr(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint = {});
Result<void> MoveRtrToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                          const std::string& hint = {});

}  // namespace qpconnect::verbs
