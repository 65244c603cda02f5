// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/transition.h"

#include <cerrno>
#include <cstdio>

#include "qpconnect/verbs/qp_state_table.h"

namespace qpconnect::verbs {
namespace {

std::string QpHex(uint32_t qpn) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%06x", qpn);
  return buf;
}

}  // namespace

std::string RangeRefusal(const QpAttrInfo& row, const ibv_qp_attr& attr) {
  const uint32_t v = row.value(attr);
  if (v >= row.min && v <= row.max) return {};
  if (row.format == AttrFormat::kMtu) {
    return std::string(row.field) + " enum " + std::to_string(v) + " is not 1..5 (256..4096)";
  }
  if (v < row.min) {
    return row.below_min != nullptr ? row.below_min
                                    : std::string(row.field) + " below " + std::to_string(row.min);
  }
  if (row.max == kAttr24Bits) return std::string(row.field) + " exceeds 24 bits";
  return std::string(row.field) + " above " + std::to_string(row.max);
}

std::string CheckRequest(Transport transport, const ModifyRequest& r) {
  // The row of this (from, to) pair, as the kernel's qp_state_table is
  // indexed by current and next state: what one move requires, another
  // from a different state may not (INIT->INIT takes none of RTR's).
  const auto rule = FindTransition(transport, r.from, r.to);
  if (!rule) {
    const std::string from = r.from == QpState::kUnknown ? "?" : QpStateName(r.from);
    return from + "->" + QpStateName(r.to) + " is not a transition of " + TransportName(transport) +
           " QPs (the state table has no row for it)";
  }
  if ((r.mask & rule->required) != rule->required) {
    return "mask lacks required " + DecodeMask(rule->required & ~r.mask);
  }
  if ((r.mask & ~(rule->required | rule->optional)) != 0) {
    return "mask sends " + DecodeMask(r.mask & ~(rule->required | rule->optional)) +
           ", not allowed at this transition";
  }
  for (const QpAttrInfo& row : kQpAttrTable) {
    if ((r.mask & row.bit) == 0) continue;
    if (std::string wrong = RangeRefusal(row, r.attr); !wrong.empty()) return wrong;
  }
  return {};
}

std::string ExplainModifyErrno(int err, Transport transport, const ModifyRequest& r) {
  const ibv_ah_attr& ah = r.attr.ah_attr;
  switch (err) {
    case EINVAL:
      if (r.to == QpState::kRtr && transport != Transport::kUd && ah.is_global == 0) {
        return "EINVAL at RTR without a GRH: RoCE (Ethernet) ports and ports flagged "
               "GRH_REQUIRED need is_global=1 with a valid sgid_index";
      }
      if (r.to == QpState::kRtr && ah.is_global != 0) {
        return "EINVAL at RTR: check sgid_index is a valid GID of the port and path_mtu is not "
               "above the port's active MTU; ibv_modify_qp does not say which attribute";
      }
      if (r.to == QpState::kRts) {
        return "EINVAL at RTS: max_rd_atomic above the device's max_qp_init_rd_atom, or "
               "timeout/retry values out of range";
      }
      return "EINVAL: an attribute or the mask is invalid for this transition; "
             "ibv_modify_qp changes nothing and does not say which";
    case ETIMEDOUT:
      return "ETIMEDOUT resolving the destination: on RoCE the kernel could not resolve the "
             "peer GID's neighbour (a link-local or unreachable dgid, or an sgid_index of the "
             "wrong netdev/type)";
    case ENETUNREACH:
    case EHOSTUNREACH:
      return "no route from the sgid's netdev to the dgid";
    case ENOMEM:
      return "the kernel or device is out of resources";
    case EPERM:
    case EACCES:
      return "permission denied (a privileged attribute, or the device's access rules)";
    default:
      return {};
  }
}

Result<void> ApplyTransition(QpControl& qp, Transport transport, const ModifyRequest& request,
                             const std::string& context_hint) {
  // A RESET from any state has no known predecessor: "->RESET".
  const std::string from = request.from == QpState::kUnknown ? "" : QpStateName(request.from);
  const std::string operation = std::string("ibv_modify_qp ") + from + "->" +
                                QpStateName(request.to) + " (" + TransportName(transport) + " qp " +
                                QpHex(qp.QpNum()) + ")";
  // A request the mask table or the value ranges refuse never reaches the
  // device: ibv_modify_qp would only say EINVAL, and we can say which.
  if (std::string wrong = CheckRequest(transport, request); !wrong.empty()) {
    std::string detail = "not sent to the device: " + wrong + "; the request was " +
                         DescribeAttr(request.attr, request.mask);
    if (!context_hint.empty()) detail += "; " + context_hint;
    return Error{ErrorCode::kInvalidArgument, 0, operation, "mask " + DecodeMask(request.mask),
                 std::move(detail)};
  }
  auto rc = qp.Modify(request.attr, request.mask);
  if (rc) return Ok();
  Error e = std::move(rc).error();
  e.operation = operation;
  e.attribute = "mask " + DecodeMask(request.mask);
  std::string detail = "refused; sent " + DescribeAttr(request.attr, request.mask);
  const std::string cause = ExplainModifyErrno(e.sys_errno, transport, request);
  if (!cause.empty()) detail += "; likely cause: " + cause;
  if (!context_hint.empty()) detail += "; " + context_hint;
  e.detail = std::move(detail);
  return e;
}

}  // namespace qpconnect::verbs
