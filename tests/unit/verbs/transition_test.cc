// SPDX-License-Identifier: MIT
// Driving transitions over FakeQp: the happy path, and refusals reported with
// the transition, mask, values and likely cause.
#include "qpconnect/verbs/transition.h"

#include <gtest/gtest.h>

#include "fakes/fake_qp.h"

namespace qpconnect::verbs {
namespace {

using qpconnect::testing::FakeQp;

QpAttrs Attrs() {
  QpAttrs a;
  a.dest_qp_num = 0x42;
  a.rq_psn = 0x100;
  a.sq_psn = 0x200;
  a.ah.is_global = true;
  a.ah.dgid = *GidFromString("::ffff:10.0.0.2");
  a.ah.sgid_index = 1;
  return a;
}

TEST(Transition, DrivesEachTransportFromResetToRts) {
  const std::pair<Transport, ibv_qp_type> cases[] = {
      {Transport::kRc, IBV_QPT_RC}, {Transport::kUc, IBV_QPT_UC}, {Transport::kUd, IBV_QPT_UD}};
  for (auto [t, type] : cases) {
    FakeQp qp(type, 0x11);
    ASSERT_TRUE(ApplyTransition(qp, t, BuildInit(t, Attrs(), IBV_ACCESS_LOCAL_WRITE)));
    ASSERT_TRUE(ApplyTransition(qp, t, BuildRtr(t, Attrs())));
    ASSERT_TRUE(ApplyTransition(qp, t, BuildRts(t, Attrs())));
    EXPECT_EQ(qp.state(), IBV_QPS_RTS) << TransportName(t);
  }
}

TEST(Transition, AWrongRequestNeverReachesTheDevice) {
  FakeQp qp(IBV_QPT_RC, 0x11);
  ASSERT_TRUE(ApplyTransition(qp, Transport::kRc,
                              BuildInit(Transport::kRc, Attrs(), IBV_ACCESS_LOCAL_WRITE)));
  const size_t calls = qp.calls().size();
  ModifyRequest r = BuildRtr(Transport::kRc, Attrs());
  r.mask &= ~IBV_QP_MIN_RNR_TIMER;  // a bug a caller could make
  auto res = ApplyTransition(qp, Transport::kRc, r);
  ASSERT_FALSE(res);
  const Error& e = res.error();
  EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(e.sys_errno, 0);
  EXPECT_EQ(e.operation, "ibv_modify_qp INIT->RTR (rc qp 0x000011)");
  EXPECT_NE(e.attribute.find("PATH_MTU"), std::string::npos);
  EXPECT_NE(e.detail.find("not sent to the device"), std::string::npos) << e.detail;
  EXPECT_NE(e.detail.find("dest_qp_num=0x000042"), std::string::npos) << e.detail;
  EXPECT_NE(e.detail.find("mask lacks required MIN_RNR_TIMER"), std::string::npos) << e.detail;
  EXPECT_EQ(qp.calls().size(), calls);  // ibv_modify_qp was not called
  EXPECT_EQ(qp.state(), IBV_QPS_INIT);

  // An optional bit the transition does not allow is caught the same way.
  ModifyRequest foreign = BuildRtr(Transport::kRc, Attrs());
  foreign.mask |= IBV_QP_SQ_PSN;
  auto f = ApplyTransition(qp, Transport::kRc, foreign);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().detail.find("not allowed at this transition"), std::string::npos);
  EXPECT_EQ(qp.calls().size(), calls);
}

TEST(Transition, ADeviceRefusalNamesTransitionMaskValuesAndCause) {
  FakeQp qp(IBV_QPT_RC, 0x11);
  ASSERT_TRUE(ApplyTransition(qp, Transport::kRc,
                              BuildInit(Transport::kRc, Attrs(), IBV_ACCESS_LOCAL_WRITE)));
  qp.FailNextWith(EINVAL);
  AddressVector no_grh;
  QpAttrs a = Attrs();
  a.ah = no_grh;
  auto res = ApplyTransition(qp, Transport::kRc, BuildRtr(Transport::kRc, a));
  ASSERT_FALSE(res);
  const Error& e = res.error();
  EXPECT_EQ(e.code, ErrorCode::kVerbs);
  EXPECT_EQ(e.sys_errno, EINVAL);
  EXPECT_EQ(e.operation, "ibv_modify_qp INIT->RTR (rc qp 0x000011)");
  EXPECT_NE(e.detail.find("refused; sent"), std::string::npos) << e.detail;
  EXPECT_NE(e.detail.find("without a GRH"), std::string::npos) << e.detail;
}

TEST(FakeQp, RefusesOptionalBitsTheSpecDoesNotAllow) {
  // The fake, not the production table: a mask with a foreign bit sent straight
  // to it is refused as the device would.
  FakeQp qp(IBV_QPT_UD, 0x12);
  ModifyRequest init = BuildInit(Transport::kUd, Attrs(), 0);
  ASSERT_TRUE(qp.Modify(init.attr, init.mask));
  ModifyRequest rtr = BuildRtr(Transport::kUd, Attrs());
  EXPECT_FALSE(qp.Modify(rtr.attr, rtr.mask | IBV_QP_AV));
  EXPECT_TRUE(qp.Modify(rtr.attr, rtr.mask | IBV_QP_QKEY));  // optional at UD RTR
}

TEST(Transition, ExplainsAnInjectedTimeoutAtRtr) {
  FakeQp qp(IBV_QPT_RC, 0x11);
  ASSERT_TRUE(ApplyTransition(qp, Transport::kRc,
                              BuildInit(Transport::kRc, Attrs(), IBV_ACCESS_LOCAL_WRITE)));
  qp.FailNextWith(ETIMEDOUT);
  auto res =
      ApplyTransition(qp, Transport::kRc, BuildRtr(Transport::kRc, Attrs()), "validator: ok");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().sys_errno, ETIMEDOUT);
  EXPECT_NE(res.error().detail.find("neighbour"), std::string::npos);
  EXPECT_NE(res.error().detail.find("validator: ok"), std::string::npos);
}

TEST(CheckRequest, FlagsOutOfRangeValuesAndForeignBits) {
  ModifyRequest r = BuildRtr(Transport::kRc, Attrs());
  r.attr.path_mtu = static_cast<ibv_mtu>(6);
  EXPECT_NE(CheckRequest(Transport::kRc, r).find("path_mtu"), std::string::npos);
  ModifyRequest u = BuildRts(Transport::kUd, Attrs());
  u.mask |= IBV_QP_TIMEOUT;
  EXPECT_NE(CheckRequest(Transport::kUd, u).find("TIMEOUT"), std::string::npos);
  EXPECT_EQ(CheckRequest(Transport::kRc, BuildRts(Transport::kRc, Attrs())), "");
}

// The check reads the state table by (from, to), as the kernel's
// qp_state_table does: the same mask into the same state is right from one
// state and wrong from another.
ModifyRequest Request(QpState from, QpState to, int mask) {
  ModifyRequest r;
  r.from = from;
  r.to = to;
  r.mask = mask;
  r.attr.qp_state = ToIbvState(to);
  ToIbvAttr(Attrs(), mask & ~IBV_QP_STATE, r.attr);
  return r;
}

TEST(CheckRequest, TheStateAloneIntoRtsIsValidFromRtsNotFromRtr) {
  const ModifyRequest from_rts = Request(QpState::kRts, QpState::kRts, IBV_QP_STATE);
  EXPECT_EQ(CheckRequest(Transport::kRc, from_rts), "");
  const ModifyRequest from_rtr = Request(QpState::kRtr, QpState::kRts, IBV_QP_STATE);
  EXPECT_EQ(CheckRequest(Transport::kRc, from_rtr),
            "mask lacks required TIMEOUT|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC|SQ_PSN");
}

TEST(CheckRequest, TheStateAloneIntoInitIsValidFromInitNotFromReset) {
  EXPECT_EQ(CheckRequest(Transport::kUd, Request(QpState::kInit, QpState::kInit, IBV_QP_STATE)),
            "");
  EXPECT_EQ(CheckRequest(Transport::kUd, Request(QpState::kReset, QpState::kInit, IBV_QP_STATE)),
            "mask lacks required PKEY_INDEX|PORT|QKEY");
}

TEST(CheckRequest, AnSqPsnIntoRtsIsAllowedFromRtrNotFromSqe) {
  const int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  EXPECT_EQ(CheckRequest(Transport::kUc, Request(QpState::kRtr, QpState::kRts, mask)), "");
  EXPECT_EQ(CheckRequest(Transport::kUc, Request(QpState::kSqe, QpState::kRts, mask)),
            "mask sends SQ_PSN, not allowed at this transition");
}

TEST(CheckRequest, APairWithoutARowIsNoTransition) {
  // RTR's attributes from INIT, but sent from RTS: RTS->RTR is no move.
  ModifyRequest r = BuildRtr(Transport::kRc, Attrs());
  EXPECT_EQ(CheckRequest(Transport::kRc, r), "");
  r.from = QpState::kRts;
  EXPECT_EQ(CheckRequest(Transport::kRc, r),
            "RTS->RTR is not a transition of rc QPs (the state table has no row for it)");
  // An RC QP has no SQE state; a UC QP does.
  const ModifyRequest sqe = Request(QpState::kSqe, QpState::kRts, IBV_QP_STATE);
  EXPECT_NE(CheckRequest(Transport::kRc, sqe).find("is not a transition"), std::string::npos);
  EXPECT_EQ(CheckRequest(Transport::kUc, sqe), "");
  // Into RESET from any state, the state alone.
  EXPECT_EQ(CheckRequest(Transport::kRc, BuildReset(Transport::kRc)), "");
  EXPECT_EQ(CheckRequest(Transport::kRc, Request(QpState::kRtr, QpState::kReset, IBV_QP_STATE)),
            "");
}

TEST(CheckRequest, ARefusedPairIsNeverSentToTheDevice) {
  FakeQp qp(IBV_QPT_RC, 0x11);
  ASSERT_TRUE(ApplyTransition(qp, Transport::kRc,
                              BuildInit(Transport::kRc, Attrs(), IBV_ACCESS_LOCAL_WRITE)));
  // The state alone into RTS is right from RTS, but this QP's request says RTR.
  auto res =
      ApplyTransition(qp, Transport::kRc, Request(QpState::kRtr, QpState::kRts, IBV_QP_STATE));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(res.error().detail.find("not sent to the device: mask lacks required TIMEOUT"),
            std::string::npos)
      << res.error().detail;
  EXPECT_EQ(qp.state(), IBV_QPS_INIT);
}

}  // namespace
}  // namespace qpconnect::verbs
