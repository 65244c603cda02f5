// SPDX-License-Identifier: MIT
// Applying one QP state transition and, when the device refuses it, saying
// which transition, which mask, every attribute value sent, the errno, and
// the likely cause.
//
// Thread-safety: as the QpControl.
#pragma once

#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "qpconnect/verbs/qp_attr_table.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_control.h"

namespace qpconnect::verbs {

// Applies `request` to `qp`, after CheckRequest(): a request that fails it is
// never sent, and returns kInvalidArgument (errno 0) with the same operation
// and attribute and the detail "not sent to the device: <what is wrong>; the
// request was <values>". When the device refuses, returns kVerbs with
//   operation = "ibv_modify_qp <FROM>-><TO> (<transport> qp 0x...)",
//   attribute = the decoded mask,
//   detail    = every attribute value sent, then "likely cause: ..." from
//               the errno, then `context_hint` if given (e.g. the
//               validator's findings).
Result<void> ApplyTransition(QpControl& qp, Transport transport, const ModifyRequest& request,
                             const std::string& context_hint = {});

// Pre-flight checks of a request against the state table's row for its
// transport and (request.from, request.to) pair (required and optional
// masks, verbs/qp_state_table.h: FindTransition) and every attribute's range
// (verbs/qp_attr_table.h): empty when nothing is wrong, else a sentence
// naming the attribute. A pair the table has no row for (RTR->INIT, or
// from kUnknown into anything but RESET or ERR) is refused as no transition.
std::string CheckRequest(Transport transport, const ModifyRequest& request);

// The range check of one table row: empty when `attr`'s value of `row` is
// within [row.min, row.max], else the refusal ("rq_psn exceeds 24 bits",
// "retry_cnt above 7", "port_num 0 is not a port").
std::string RangeRefusal(const QpAttrInfo& row, const ibv_qp_attr& attr);

// What an errno from ibv_modify_qp usually means at this transition.
std::string ExplainModifyErrno(int err, Transport transport, const ModifyRequest& request);

}  // namespace qpconnect::verbs
