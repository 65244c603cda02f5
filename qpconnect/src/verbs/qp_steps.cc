#include "qpconnect/verbs/qp_steps.h"

#include <infiniband/verbs.h>

#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/transition.h"

namespace qpconnect::verbs {

uint32_t UdSendQkey(const ConnectionPlan& plan, uint32_t fallback) {
  if (plan.qps.empty()) return fallback;
  return plan.qps[0].remote_qkey.value_or(plan.qps[0].qkey);
}

unsigned DefaultAccessFlags(Transport transport) {
  switch (transport) {
    case Transport::kRc:
      return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    case Transport::kUc:
      return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    case Transport::kUd:
      return IBV_ACCESS_LOCAL_WRITE;
  }
  return IBV_ACCESS_LOCAL_WRITE;
}

Result<void> MoveToInit(QpControl& qp, Transport transport, const QpAttrs& attrs,
                        unsigned access_flags) {
  return ApplyTransition(qp, transport, BuildInit(transport, attrs, access_flags));
}

Result<void> MoveToRtr(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint) {
  QPC_TRY(CheckAddressVector(attrs.ah));
  return ApplyTransition(qp, transport, BuildRtr(transport, attrs), hint);
}

Result<void> MoveRtrToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                          const std::string& hint) {
  return ApplyTransition(qp, transport, BuildRts(transport, attrs), hint);
}

Result<void> MoveToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint) {
  QPC_TRY(MoveToRtr(qp, transport, attrs, hint));
  return MoveRtrToRts(qp, transport, attrs, hint);
}

}  // namespace qpconnect::verbs
