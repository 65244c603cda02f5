// SPDX-License-Identifier: MIT
// qp-connect's dumps (`qp-connect --dump FILE`: a side's description and the
// attributes it applied) read into the observed-QP model (observed.h), so that
// pairing and the judges see a dump as they see a trace. The file itself is
// decoded by oob (qpconnect/oob/codec.h, DecodeDumpJson): this floor knows no
// wire format.
//
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/observe/observed.h"
#include "qpconnect/plan.h"

namespace qpconnect {

// Appends one ObservedQp (source kDump, origin `origin`) per QP of `local`,
// each with its description narrowed to that QP. When `plan` holds the QP,
// the QP also gets the attributes applied, its dest_qpn (RC, UC) and the
// transitions RESET->INIT, INIT->RTR, RTR->RTS as qp-connect made them, with
// the required masks of ibv_modify_qp(3) (what the trace judge reads).
void AddDump(const EndpointInfo& local, const std::optional<ConnectionPlan>& plan,
             const std::string& origin, Observation* out);

}  // namespace qpconnect
