// SPDX-License-Identifier: MIT
// Building ibv_modify_qp requests: the attributes and mask of each transition
// RESET->INIT->RTR->RTS per transport, from a verbs-free QpAttrs.
//
// The required/optional masks per transport and state pair are data
// (verbs/qp_state_table.h), as are the attributes' names, fields and ranges
// (verbs/qp_attr_table.h); the builders (by FindTransition: the row of their
// (from, to) pair), DecodeMask and DescribeAttr read them. The builders send
// exactly the required attributes, never an optional one (the optional
// column is what CheckRequest() accepts from other callers, e.g. a traced
// program's mask). DecodeMask and DescribeAttr render a request
// for error reports:
// "ibv_modify_qp INIT->RTR refused" names the mask and every value sent.
//
// Thread-safety: pure functions.
#pragma once

#include <infiniband/verbs.h>

#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"

namespace qpconnect::verbs {

enum class QpState : uint8_t { kReset, kInit, kRtr, kRts, kSqd, kSqe, kErr, kUnknown };

const char* QpStateName(QpState s);  // "RESET", "INIT", "RTR", "RTS", ...
ibv_qp_state ToIbvState(QpState s);
QpState FromIbvState(ibv_qp_state s);
ibv_qp_type ToIbvQpType(Transport t);

// The IBV_QP_* bits a QpAttrs carries: AV in `ah`, each other one in one
// member (PORT port_num, PKEY_INDEX, QKEY, PATH_MTU, DEST_QPN, RQ_PSN, SQ_PSN,
// TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC, MAX_DEST_RD_ATOMIC,
// MIN_RNR_TIMER). What a builder, a trace reader or a judge moves between a
// QpAttrs and an ibv_qp_attr goes through the four functions below, so the
// bit <-> member knowledge is written once.
int QpAttrsMask();
// The member of `a` that `bit` (one bit of QpAttrsMask(), not AV) carries,
// as a number (PATH_MTU: the enum); 0 for another bit.
uint32_t QpAttrsValue(const QpAttrs& a, int bit);
// Sets that member to `value` (truncated to its type); nothing for another bit.
void SetQpAttrsValue(QpAttrs& a, int bit, uint32_t value);
// Copies into `attr` the values of `a` that the bits of `mask` carry (AV:
// ToAhAttr(a.ah)); the other fields of `attr` are left as they are.
// REQUIRES: with AV, CheckAddressVector(a.ah) passed.
void ToIbvAttr(const QpAttrs& a, int mask, ibv_qp_attr& attr);
// Copies from `from` into `to` the members the bits of `mask` carry.
void CopyQpAttrs(const QpAttrs& from, int mask, QpAttrs& to);

// One ibv_modify_qp call.
struct ModifyRequest {
  QpState from = QpState::kReset;
  QpState to = QpState::kInit;
  ibv_qp_attr attr{};
  int mask = 0;
};

// INIT: port, pkey_index, and access flags (RC/UC) or Q_Key (UD).
ModifyRequest BuildInit(Transport transport, const QpAttrs& a, unsigned access_flags);
// RTR: RC/UC the address vector, path MTU, dest QPN, rq_psn (RC also
// max_dest_rd_atomic, min_rnr_timer); UD only the state.
ModifyRequest BuildRtr(Transport transport, const QpAttrs& a);
// RTS: sq_psn (RC also timeout, retry_cnt, rnr_retry, max_rd_atomic).
ModifyRequest BuildRts(Transport transport, const QpAttrs& a);
// RESET from any state (from = kUnknown: rendered "->RESET"): only the state.
ModifyRequest BuildReset(Transport transport);

// The ibv_ah_attr for `av` (UD address handles and RC/UC RTR).
// REQUIRES: CheckAddressVector(av) passed (sgid_index fits 8 bits).
ibv_ah_attr ToAhAttr(const AddressVector& av);

// What ibv_ah_attr cannot carry: with a GRH, an sgid_index above 255 (it would
// be truncated and select another GID) or a flow label above 20 bits.
// kInvalidArgument naming the attribute; Ok otherwise.
Result<void> CheckAddressVector(const AddressVector& av);

// "STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN": the attribute table's names, in bit
// order (unknown bits as 0x...).
std::string DecodeMask(int mask);
// "qp_state=RTR path_mtu=1024 dest_qp_num=0x000123 rq_psn=... ah={dlid=0 ...}"
// for every attribute the mask sends that the attribute table renders, in its
// order.
std::string DescribeAttr(const ibv_qp_attr& attr, int mask);

}  // namespace qpconnect::verbs
