// SPDX-License-Identifier: MIT
// FakeQp: a QpControl that models the QP state machine of ibv_modify_qp(3),
// written out independently of the production mask table (qp_attrs.cc) so a
// test cannot agree with the code by construction. It refuses, with EINVAL and
// no state change, a transition from the wrong state, without the attributes
// the man page requires, or with attributes the IB spec neither requires nor
// allows as optional; and it can inject a failure, on the next call or on the
// transition into a given state (INIT, RTR, RTS, RESET).
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::testing {

class FakeQp : public verbs::QpControl {
 public:
  FakeQp(ibv_qp_type type, uint32_t qpn) : type_(type), qpn_(qpn) {}

  uint32_t QpNum() const override { return qpn_; }

  Result<void> Modify(const ibv_qp_attr& attr, int mask) override {
    calls_.push_back({attr, mask});
    if (inject_errno_) {
      int e = *inject_errno_;
      inject_errno_.reset();
      return verbs::VerbsError("ibv_modify_qp", e);
    }
    if (fail_into_ && (mask & IBV_QP_STATE) && attr.qp_state == fail_into_->first) {
      int e = fail_into_->second;
      fail_into_.reset();
      return verbs::VerbsError("ibv_modify_qp", e);
    }
    if (!(mask & IBV_QP_STATE)) return verbs::VerbsError("ibv_modify_qp", EINVAL);
    ibv_qp_state next = attr.qp_state;
    if (!Allowed(state_, next)) return verbs::VerbsError("ibv_modify_qp", EINVAL);
    const bool forward = !Sideways(state_, next);
    int allowed = IBV_QP_STATE;
    for (int bit : forward ? Required(next) : std::vector<int>{IBV_QP_STATE}) {
      if (!(mask & bit)) return verbs::VerbsError("ibv_modify_qp", EINVAL);
      allowed |= bit;
    }
    // Forward transitions, and the moves within and between INIT, RTS, SQD
    // and SQE, take only their required and optional attributes.
    if (next == IBV_QPS_INIT || next == IBV_QPS_RTR || next == IBV_QPS_RTS || next == IBV_QPS_SQD) {
      for (int bit : forward ? Optional(next) : SidewaysOptional(state_, next)) allowed |= bit;
      if ((mask & ~allowed) != 0) return verbs::VerbsError("ibv_modify_qp", EINVAL);
    }
    state_ = next;
    if (mask & IBV_QP_PORT) port_ = attr.port_num;
    if (next == IBV_QPS_RESET) port_ = 0;
    return Ok();
  }

  Result<verbs::QpState> State() override { return verbs::FromIbvState(state_); }
  Result<uint8_t> PortNum() override { return port_; }

  void FailNextWith(int err) { inject_errno_ = err; }
  // The next modify into `state` fails with `err` (once), changing nothing.
  void FailInto(ibv_qp_state state, int err) { fail_into_ = std::make_pair(state, err); }
  // Puts the QP in `state` on `port` as if another program had moved it.
  void Force(ibv_qp_state state, uint8_t port) {
    state_ = state;
    port_ = port;
  }
  ibv_qp_state state() const { return state_; }
  const std::vector<std::pair<ibv_qp_attr, int>>& calls() const { return calls_; }

 private:
  bool Allowed(ibv_qp_state from, ibv_qp_state to) const {
    return (from == IBV_QPS_RESET && to == IBV_QPS_INIT) ||
           (from == IBV_QPS_INIT && to == IBV_QPS_RTR) ||
           (from == IBV_QPS_RTR && to == IBV_QPS_RTS) || to == IBV_QPS_RESET || to == IBV_QPS_ERR ||
           Sideways(from, to);
  }

  // The moves off the RESET->INIT->RTR->RTS path (IBA vol. 1, 11.2.5): they
  // require the state alone. SQE exists for UC and UD QPs only.
  bool Sideways(ibv_qp_state from, ibv_qp_state to) const {
    return (from == IBV_QPS_INIT && to == IBV_QPS_INIT) ||
           (from == IBV_QPS_RTS && (to == IBV_QPS_RTS || to == IBV_QPS_SQD)) ||
           (from == IBV_QPS_SQD && (to == IBV_QPS_RTS || to == IBV_QPS_SQD)) ||
           (from == IBV_QPS_SQE && to == IBV_QPS_RTS && type_ != IBV_QPT_RC);
  }

  // Their optional attributes, the IB spec's "Optional" column as the
  // kernel's qp_state_table lists it (drivers/infiniband/core/verbs.c).
  std::vector<int> SidewaysOptional(ibv_qp_state from, ibv_qp_state to) const {
    const bool ud = type_ == IBV_QPT_UD;
    const bool rc = type_ == IBV_QPT_RC;
    if (from == IBV_QPS_INIT) {
      return {IBV_QP_PKEY_INDEX, IBV_QP_PORT, ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS};
    }
    if (to == IBV_QPS_SQD && from == IBV_QPS_RTS) return {IBV_QP_EN_SQD_ASYNC_NOTIFY};
    if (to == IBV_QPS_SQD) {  // SQD -> SQD
      if (ud) return {IBV_QP_PKEY_INDEX, IBV_QP_QKEY};
      std::vector<int> o = {IBV_QP_AV, IBV_QP_ALT_PATH, IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX,
                            IBV_QP_PATH_MIG_STATE};
      if (rc) {
        o.insert(o.end(),
                 {IBV_QP_PORT, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY,
                  IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER});
      }
      return o;
    }
    // -> RTS from RTS, SQD or SQE.
    if (ud) return {IBV_QP_CUR_STATE, IBV_QP_QKEY};
    if (from == IBV_QPS_SQE) return {IBV_QP_CUR_STATE, IBV_QP_ACCESS_FLAGS};
    std::vector<int> o = {IBV_QP_CUR_STATE, IBV_QP_ACCESS_FLAGS, IBV_QP_ALT_PATH,
                          IBV_QP_PATH_MIG_STATE};
    if (rc) o.push_back(IBV_QP_MIN_RNR_TIMER);
    return o;
  }

  // The man page's "Required attributes" tables, one row per next state.
  std::vector<int> Required(ibv_qp_state next) const {
    switch (next) {
      case IBV_QPS_INIT:
        if (type_ == IBV_QPT_UD) return {IBV_QP_STATE, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_QKEY};
        return {IBV_QP_STATE, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS};
      case IBV_QPS_RTR:
        if (type_ == IBV_QPT_UD) return {IBV_QP_STATE};
        if (type_ == IBV_QPT_UC) {
          return {IBV_QP_STATE, IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN};
        }
        return {IBV_QP_STATE,        IBV_QP_AV,     IBV_QP_PATH_MTU,
                IBV_QP_DEST_QPN,     IBV_QP_RQ_PSN, IBV_QP_MAX_DEST_RD_ATOMIC,
                IBV_QP_MIN_RNR_TIMER};
      case IBV_QPS_RTS:
        if (type_ == IBV_QPT_RC) {
          return {IBV_QP_STATE,     IBV_QP_SQ_PSN,    IBV_QP_MAX_QP_RD_ATOMIC,
                  IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_TIMEOUT};
        }
        return {IBV_QP_STATE, IBV_QP_SQ_PSN};
      default:
        return {IBV_QP_STATE};
    }
  }

  // The optional attributes of each forward transition, from the IB spec's
  // QP state transition table (IBA vol. 1, 11.2.5, "Optional" column).
  std::vector<int> Optional(ibv_qp_state next) const {
    switch (next) {
      case IBV_QPS_RTR:
        if (type_ == IBV_QPT_UD) return {IBV_QP_PKEY_INDEX, IBV_QP_QKEY};
        return {IBV_QP_ALT_PATH, IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX};
      case IBV_QPS_RTS:
        if (type_ == IBV_QPT_UD) return {IBV_QP_CUR_STATE, IBV_QP_QKEY};
        if (type_ == IBV_QPT_UC) {
          return {IBV_QP_CUR_STATE, IBV_QP_ACCESS_FLAGS, IBV_QP_ALT_PATH, IBV_QP_PATH_MIG_STATE};
        }
        return {IBV_QP_CUR_STATE, IBV_QP_ACCESS_FLAGS, IBV_QP_MIN_RNR_TIMER, IBV_QP_ALT_PATH,
                IBV_QP_PATH_MIG_STATE};
      default:
        return {};
    }
  }

  ibv_qp_type type_;
  uint32_t qpn_;
  ibv_qp_state state_ = IBV_QPS_RESET;
  uint8_t port_ = 0;
  std::optional<int> inject_errno_;
  std::optional<std::pair<ibv_qp_state, int>> fail_into_;
  std::vector<std::pair<ibv_qp_attr, int>> calls_;
};

}  // namespace qpconnect::testing
