// The hardware seam for QP state changes: the connector drives a QpControl,
// which is a real ibv_qp in production and a fake modelling ibv_modify_qp(3)'s
// state table in unit tests (tests/fakes/fake_qp.h).
//
// Thread-safety: one thread at a time per QP.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "qpconnect/result.h"
#include "qpconnect/verbs/qp_attrs.h"

namespace qpconnect::verbs {

class QpControl {
 public:
  virtual ~QpControl() = default;
  virtual uint32_t QpNum() const = 0;
  // ibv_modify_qp. On failure: kVerbs with the errno it returned.
  virtual Result<void> Modify(const ibv_qp_attr& attr, int mask) = 0;
  // ibv_query_qp's current state.
  virtual Result<QpState> State() = 0;
};

// QpControl over a real QP. Does not own `qp`.
class VerbsQpControl final : public QpControl {
 public:
  explicit VerbsQpControl(ibv_qp& qp) : qp_(&qp) {}
  uint32_t QpNum() const override { return qp_->qp_num; }
  Result<void> Modify(const ibv_qp_attr& attr, int mask) override;
  Result<QpState> State() override;

 private:
  ibv_qp* qp_;
};

}  // namespace qpconnect::verbs
