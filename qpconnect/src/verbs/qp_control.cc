#include "qpconnect/verbs/qp_control.h"

#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::verbs {

Result<void> VerbsQpControl::Modify(const ibv_qp_attr& attr, int mask) {
  ibv_qp_attr copy = attr;  // ibv_modify_qp takes a non-const pointer
  if (int rc = ibv_modify_qp(qp_, &copy, mask); rc != 0) return VerbsError("ibv_modify_qp", rc);
  return Ok();
}

Result<QpState> VerbsQpControl::State() {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (int rc = ibv_query_qp(qp_, &attr, IBV_QP_STATE, &init); rc != 0) {
    return VerbsError("ibv_query_qp", rc);
  }
  return FromIbvState(attr.qp_state);
}

}  // namespace qpconnect::verbs
