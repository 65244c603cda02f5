// SPDX-License-Identifier: MIT
// The attribute and state tables (verbs/qp_attr_table.h, qp_state_table.h)
// as data: every attribute has a name, a field and a range, every mask bit
// of libibverbs has a row, the refusal messages come from the ranges, and the
// state table agrees with the fake QP's independently written one (and, in
// qp_attrs_test.cc, with the ibv_modify_qp(3) man page).
#include "qpconnect/verbs/qp_attr_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "fakes/fake_qp.h"
#include "qpconnect/verbs/qp_state_table.h"
#include "qpconnect/verbs/transition.h"

namespace qpconnect::verbs {
namespace {

TEST(AttrTable, EveryAttributeHasADecoderNameAFieldAndARange) {
  std::set<int> bits;
  std::set<std::string> fields;
  for (const QpAttrInfo& row : kQpAttrTable) {
    SCOPED_TRACE(row.field);
    EXPECT_NE(row.bit, 0);
    EXPECT_EQ(row.bit & (row.bit - 1), 0) << "one bit per row";
    EXPECT_TRUE(bits.insert(row.bit).second) << "bit twice";
    ASSERT_NE(row.mask_name, nullptr);
    ASSERT_NE(row.field, nullptr);
    EXPECT_TRUE(fields.insert(row.field).second) << "field twice";
    EXPECT_EQ(DecodeMask(row.bit), row.mask_name);
    EXPECT_LE(row.min, row.max);
    EXPECT_EQ(row.below_min != nullptr, row.min > 0 && row.format != AttrFormat::kMtu);
    ASSERT_NE(row.value, nullptr);
    EXPECT_EQ(FindQpAttr(row.bit), &row);
    EXPECT_EQ(FindQpAttrByField(row.field), &row);
    if (row.format == AttrFormat::kHex) {
      EXPECT_GT(row.hex_width, 0);
    }
  }
  EXPECT_EQ(FindQpAttr(1 << 30), nullptr);
  EXPECT_EQ(FindQpAttrByField("no_such_field"), nullptr);
}

TEST(AttrTable, EveryMaskBitOfLibibverbsHasARow) {
  // enum ibv_qp_attr_mask: bits 0..20, then RATE_LIMIT (25).
  for (int bit = IBV_QP_STATE; bit <= IBV_QP_DEST_QPN; bit <<= 1) {
    EXPECT_NE(FindQpAttr(bit), nullptr) << "bit 0x" << std::hex << bit;
  }
  EXPECT_NE(FindQpAttr(IBV_QP_RATE_LIMIT), nullptr);
  // What DescribeAttr renders comes first, and is every attribute the
  // connector's builders send.
  int described = 0;
  for (size_t i = 0; i < kDescribedAttrs; ++i) described |= kQpAttrTable[i].bit;
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    const QpAttrs a;
    for (const ModifyRequest& r : {BuildInit(t, a, 0), BuildRtr(t, a), BuildRts(t, a)}) {
      EXPECT_EQ(r.mask & ~described, 0) << TransportName(t) << QpStateName(r.to);
    }
  }
}

TEST(AttrTable, DecodeMaskNamesBitsInAscendingOrder) {
  EXPECT_EQ(DecodeMask(IBV_QP_DEST_QPN | IBV_QP_STATE | IBV_QP_AV),
            "STATE|AV|DEST_QPN");  // bit order, not table order
  EXPECT_EQ(DecodeMask(0), "0");
  EXPECT_EQ(DecodeMask(IBV_QP_STATE | (1 << 29)), "STATE|0x20000000");
}

// The refusal of each range, worded as CheckRequest always said it.
TEST(AttrTable, RangesGiveTheRefusalMessages) {
  ibv_qp_attr a{};
  a.port_num = 0;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_PORT), a), "port_num 0 is not a port");
  a.port_num = 1;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_PORT), a), "");
  a.path_mtu = static_cast<ibv_mtu>(0);
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_PATH_MTU), a),
            "path_mtu enum 0 is not 1..5 (256..4096)");
  a.path_mtu = static_cast<ibv_mtu>(6);
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_PATH_MTU), a),
            "path_mtu enum 6 is not 1..5 (256..4096)");
  a.rq_psn = 1u << 24;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_RQ_PSN), a), "rq_psn exceeds 24 bits");
  a.sq_psn = 1u << 24;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_SQ_PSN), a), "sq_psn exceeds 24 bits");
  a.dest_qp_num = 1u << 24;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_DEST_QPN), a), "dest_qp_num exceeds 24 bits");
  a.retry_cnt = 8;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_RETRY_CNT), a), "retry_cnt above 7");
  a.rnr_retry = 8;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_RNR_RETRY), a), "rnr_retry above 7");
  a.timeout = 32;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_TIMEOUT), a), "timeout above 31");
  a.min_rnr_timer = 32;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_MIN_RNR_TIMER), a), "min_rnr_timer above 31");
  a.ah_attr.port_num = 0;
  EXPECT_EQ(RangeRefusal(*FindQpAttr(IBV_QP_AV), a), "ah_attr.port_num 0");
}

TEST(AttrTable, CheckRequestRefusesAnOutOfRangeValueByName) {
  QpAttrs attrs;
  attrs.rq_psn = 0x1000000;
  ModifyRequest r = BuildRtr(Transport::kRc, attrs);
  r.attr.rq_psn = 0x1000000;
  r.attr.ah_attr.port_num = 1;
  EXPECT_EQ(CheckRequest(Transport::kRc, r), "rq_psn exceeds 24 bits");
}

// QpAttrs <-> ibv_qp_attr goes through the table: each bit QpAttrs carries
// lands in the field the attribute table names for it, and back.
TEST(AttrTable, QpAttrsMembersMoveThroughTheirTableFields) {
  const int carried = QpAttrsMask();
  EXPECT_NE(carried & IBV_QP_AV, 0);
  EXPECT_EQ(carried & (IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CAP), 0);
  uint32_t next = 1;
  for (const QpAttrInfo& row : kQpAttrTable) {
    if ((row.bit & carried) == 0 || row.bit == IBV_QP_AV) continue;
    SCOPED_TRACE(row.field);
    const uint32_t v = row.format == AttrFormat::kMtu ? uint32_t{IBV_MTU_2048} : next++;
    QpAttrs a;
    SetQpAttrsValue(a, row.bit, v);
    EXPECT_EQ(QpAttrsValue(a, row.bit), v);
    ibv_qp_attr attr{};
    ToIbvAttr(a, row.bit, attr);
    EXPECT_EQ(row.value(attr), v);
    QpAttrs copy;
    CopyQpAttrs(a, row.bit, copy);
    EXPECT_EQ(QpAttrsValue(copy, row.bit), v);
    QpAttrs untouched;
    CopyQpAttrs(a, carried & ~row.bit, untouched);
    EXPECT_EQ(untouched, QpAttrs{});
  }
  QpAttrs a;
  a.ah.port_num = 2;
  a.ah.dlid = 7;
  ibv_qp_attr attr{};
  ToIbvAttr(a, IBV_QP_AV, attr);
  EXPECT_EQ(attr.ah_attr.dlid, 7);
  EXPECT_EQ(FindQpAttr(IBV_QP_AV)->value(attr), 2u);
}

TEST(StateTable, OneRowPerTransportAndStatePairWithDisjointColumns) {
  std::set<std::tuple<int, int, int>> seen;
  for (const QpTransitionRule& rule : kQpStateTable) {
    EXPECT_TRUE(seen.insert({static_cast<int>(rule.transport), static_cast<int>(rule.from),
                             static_cast<int>(rule.to)})
                    .second);
    EXPECT_EQ(rule.required & rule.optional, 0);
    EXPECT_NE(rule.required & IBV_QP_STATE, 0);
    for (int bit = 1; bit != 0 && bit <= IBV_QP_RATE_LIMIT; bit <<= 1) {
      if ((rule.required | rule.optional) & bit) {
        EXPECT_NE(FindQpAttr(bit), nullptr);
      }
    }
  }
  EXPECT_TRUE(FindTransition(Transport::kUd, QpState::kInit, QpState::kRtr));
  EXPECT_TRUE(FindTransition(Transport::kRc, QpState::kRts, QpState::kReset));
  EXPECT_FALSE(FindTransition(Transport::kRc, QpState::kReset, QpState::kRts));
}

// The moves off the connect path are rows too, so the trace judge reads the
// whole state machine from the table, each move by its (from, to) pair.
TEST(StateTable, HoldsEveryMoveOfTheStateMachine) {
  for (auto [from, to] : {std::pair{QpState::kInit, QpState::kInit},
                          {QpState::kRts, QpState::kRts},
                          {QpState::kRts, QpState::kSqd},
                          {QpState::kSqd, QpState::kRts},
                          {QpState::kSqd, QpState::kSqd},
                          {QpState::kSqe, QpState::kRts},
                          {QpState::kErr, QpState::kReset}}) {
    EXPECT_TRUE(IsStateTransition(from, to)) << QpStateName(from) << "->" << QpStateName(to);
  }
  for (auto [from, to] : {std::pair{QpState::kRtr, QpState::kInit},
                          {QpState::kReset, QpState::kRtr},
                          {QpState::kRtr, QpState::kRtr},
                          {QpState::kSqd, QpState::kInit}}) {
    EXPECT_FALSE(IsStateTransition(from, to)) << QpStateName(from) << "->" << QpStateName(to);
  }
  EXPECT_FALSE(FindTransition(Transport::kRc, QpState::kSqe, QpState::kRts));
  // One target, two rows: what RTS->RTS requires is not what RTR->RTS does.
  EXPECT_EQ(FindTransition(Transport::kRc, QpState::kRts, QpState::kRts)->required, IBV_QP_STATE);
  EXPECT_NE(FindTransition(Transport::kRc, QpState::kRtr, QpState::kRts)->required & IBV_QP_SQ_PSN,
            0);
  EXPECT_FALSE(FindTransition(Transport::kRc, QpState::kUnknown, QpState::kInit));
}

ibv_qp_type TypeOf(Transport t) { return ToIbvQpType(t); }

// The fake QP's own table (fake_qp.h, written apart) accepts exactly what
// this one requires, with or without the optional attributes, and refuses
// each required attribute left out.
TEST(StateTable, AgreesWithTheFakeQpsIndependentTable) {
  for (const QpTransitionRule& rule : kQpStateTable) {
    if (rule.from == QpState::kUnknown) continue;
    SCOPED_TRACE(std::string(TransportName(rule.transport)) + " " + QpStateName(rule.from) + "->" +
                 QpStateName(rule.to));
    ibv_qp_attr attr{};
    attr.qp_state = ToIbvState(rule.to);
    for (int mask : {rule.required, rule.required | rule.optional}) {
      qpconnect::testing::FakeQp qp(TypeOf(rule.transport), 1);
      qp.Force(ToIbvState(rule.from), 1);
      EXPECT_TRUE(qp.Modify(attr, mask)) << DecodeMask(mask);
      EXPECT_EQ(qp.state(), ToIbvState(rule.to));
    }
    for (int bit = IBV_QP_PKEY_INDEX; bit <= IBV_QP_RATE_LIMIT; bit <<= 1) {
      if ((rule.required & bit) == 0) continue;
      qpconnect::testing::FakeQp qp(TypeOf(rule.transport), 1);
      qp.Force(ToIbvState(rule.from), 1);
      EXPECT_FALSE(qp.Modify(attr, rule.required & ~bit)) << "without " << DecodeMask(bit);
    }
  }
}

}  // namespace
}  // namespace qpconnect::verbs
