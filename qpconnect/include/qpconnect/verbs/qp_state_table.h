// SPDX-License-Identifier: MIT
// The QP state table as data: per transport and (from, to) state pair, the
// attributes ibv_modify_qp requires and those it may take besides, in the
// shape of the kernel's qp_state_table (drivers/infiniband/core/verbs.c).
// The attributes themselves (mask bit, field, range) are in
// verbs/qp_attr_table.h. One lookup, FindTransition (transport, from, to),
// serves the builders (qp_attrs.h), CheckRequest (transition.h), the dump
// reader and the trace judge (which moves a QP can make, which attributes
// each sends); the fake QP of the unit tests keeps its own
// (tests/fakes/fake_qp.h), and qp_attr_table_test.cc checks the required
// column against the ibv_modify_qp(3) man page.
//
// Thread-safety: constant data.
#pragma once

#include <infiniband/verbs.h>

#include <optional>

#include "qpconnect/endpoint.h"
#include "qpconnect/verbs/qp_attrs.h"

namespace qpconnect::verbs {

// One row: modifying a `transport` QP from `from` to `to` needs every bit of
// `required` and may add those of `optional`. `from` kUnknown: any state.
struct QpTransitionRule {
  Transport transport;
  QpState from;
  QpState to;
  int required;
  int optional;
};

// What a move into RTS may send besides the state, per transport: from RTR,
// RTS or SQD (and, for UD, from SQE).
inline constexpr int kRcIntoRtsOptional = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
                                          IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE;
inline constexpr int kUcIntoRtsOptional =
    IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE;
inline constexpr int kUdIntoRtsOptional = IBV_QP_CUR_STATE | IBV_QP_QKEY;

// Required: ibv_modify_qp(3)'s "Required attributes" tables. Optional: the IB
// spec's QP state transition table (IBA vol. 1, 11.2.5), restricted to what
// the connector and the programs it traces use. Any state may go to RESET or
// ERR with the state alone. The path RESET->INIT->RTR->RTS comes first, then
// the other moves of the state machine (INIT->INIT, RTS->RTS, RTS->SQD,
// SQD->RTS, SQD->SQD, SQE->RTS), with the state alone required and the
// optional attributes of the kernel's qp_state_table; SQE->RTS only for UC
// and UD (an RC QP has no SQE state).
// A pair of states the table has no row for is not a transition (the trace
// judge says so of a traced program's modify).
inline constexpr QpTransitionRule kQpStateTable[] = {
    // RESET -> INIT
    {Transport::kRc, QpState::kReset, QpState::kInit,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
    {Transport::kUc, QpState::kReset, QpState::kInit,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
    {Transport::kUd, QpState::kReset, QpState::kInit,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0},
    // INIT -> RTR
    {Transport::kRc, QpState::kInit, QpState::kRtr,
     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {Transport::kUc, QpState::kInit, QpState::kRtr,
     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {Transport::kUd, QpState::kInit, QpState::kRtr, IBV_QP_STATE, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
    // RTR -> RTS
    {Transport::kRc, QpState::kRtr, QpState::kRts,
     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
         IBV_QP_MAX_QP_RD_ATOMIC,
     kRcIntoRtsOptional},
    {Transport::kUc, QpState::kRtr, QpState::kRts, IBV_QP_STATE | IBV_QP_SQ_PSN,
     kUcIntoRtsOptional},
    {Transport::kUd, QpState::kRtr, QpState::kRts, IBV_QP_STATE | IBV_QP_SQ_PSN,
     kUdIntoRtsOptional},
    // any -> RESET, any -> ERR
    {Transport::kRc, QpState::kUnknown, QpState::kReset, IBV_QP_STATE, 0},
    {Transport::kUc, QpState::kUnknown, QpState::kReset, IBV_QP_STATE, 0},
    {Transport::kUd, QpState::kUnknown, QpState::kReset, IBV_QP_STATE, 0},
    {Transport::kRc, QpState::kUnknown, QpState::kErr, IBV_QP_STATE, 0},
    {Transport::kUc, QpState::kUnknown, QpState::kErr, IBV_QP_STATE, 0},
    {Transport::kUd, QpState::kUnknown, QpState::kErr, IBV_QP_STATE, 0},
    // The other moves, per transport: the state alone required.
    {Transport::kRc, QpState::kInit, QpState::kInit, IBV_QP_STATE,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {Transport::kRc, QpState::kRts, QpState::kRts, IBV_QP_STATE, kRcIntoRtsOptional},
    {Transport::kRc, QpState::kRts, QpState::kSqd, IBV_QP_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY},
    {Transport::kRc, QpState::kSqd, QpState::kRts, IBV_QP_STATE, kRcIntoRtsOptional},
    {Transport::kRc, QpState::kSqd, QpState::kSqd, IBV_QP_STATE,
     IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
         IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
         IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE},
    {Transport::kUc, QpState::kInit, QpState::kInit, IBV_QP_STATE,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {Transport::kUc, QpState::kRts, QpState::kRts, IBV_QP_STATE, kUcIntoRtsOptional},
    {Transport::kUc, QpState::kSqd, QpState::kSqd, IBV_QP_STATE,
     IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE},
    {Transport::kUc, QpState::kRts, QpState::kSqd, IBV_QP_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY},
    {Transport::kUc, QpState::kSqd, QpState::kRts, IBV_QP_STATE, kUcIntoRtsOptional},
    {Transport::kUc, QpState::kSqe, QpState::kRts, IBV_QP_STATE,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS},
    {Transport::kUd, QpState::kInit, QpState::kInit, IBV_QP_STATE,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY},
    {Transport::kUd, QpState::kRts, QpState::kRts, IBV_QP_STATE, kUdIntoRtsOptional},
    {Transport::kUd, QpState::kRts, QpState::kSqd, IBV_QP_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY},
    {Transport::kUd, QpState::kSqd, QpState::kRts, IBV_QP_STATE, kUdIntoRtsOptional},
    {Transport::kUd, QpState::kSqd, QpState::kSqd, IBV_QP_STATE, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
    {Transport::kUd, QpState::kSqe, QpState::kRts, IBV_QP_STATE, kUdIntoRtsOptional},
};

// The rule for a `transport` QP from `from` to `to` (a row with `from`
// kUnknown matches any state); nullopt when the table has none, i.e. not a
// transition of the QP state machine as far as the connector knows it.
constexpr std::optional<QpTransitionRule> FindTransition(Transport transport, QpState from,
                                                         QpState to) {
  for (const QpTransitionRule& r : kQpStateTable) {
    if (r.transport == transport && r.to == to && (r.from == from || r.from == QpState::kUnknown)) {
      return r;
    }
  }
  return std::nullopt;
}

// Whether the QP state machine has a move from `from` to `to`, for a QP of
// any transport the table knows (the states and their moves are the same for
// RC, UC and UD but for SQE, which an RC QP never enters).
constexpr bool IsStateTransition(QpState from, QpState to) {
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    if (FindTransition(t, from, to)) return true;
  }
  return false;
}

}  // namespace qpconnect::verbs
