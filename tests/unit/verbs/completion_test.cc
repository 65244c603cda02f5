// SPDX-License-Identifier: MIT
// PollOne (qpconnect/verbs/completion.h) on a CQ whose poll_cq is ours: a
// failed completion, and what the watch says of the peer meanwhile.
#include "qpconnect/verbs/completion.h"

#include <gtest/gtest.h>

#include <string>

namespace qpconnect::verbs {
namespace {

// ibv_poll_cq() calls cq->context->ops.poll_cq: one completion, failed as a
// peer's released QP makes a SEND fail.
int FailedSend(ibv_cq* /*cq*/, int /*num_entries*/, ibv_wc* wc) {
  *wc = ibv_wc{};
  wc->status = IBV_WC_REM_OP_ERR;
  wc->opcode = IBV_WC_SEND;
  wc->qp_num = 0x1a;
  return 1;
}

struct FakeCq {
  ibv_context context{};
  ibv_cq cq{};
  FakeCq() {
    context.ops.poll_cq = &FailedSend;
    cq.context = &context;
  }
};

Error FailureOf(const CompletionWait& wait) {
  FakeCq fake;
  auto r = PollOne(fake.cq, Clock::now() + std::chrono::seconds(10), "SEND on rc qp 0x00001a",
                   Transport::kRc, wait);
  EXPECT_FALSE(r);
  if (r) return {};
  EXPECT_EQ(r.error().code, ErrorCode::kTraffic);
  EXPECT_EQ(r.error().operation, "SEND on rc qp 0x00001a");
  return r.error();
}

TEST(PollOne, AFailedCompletionNamesItsStatusAndLikelyCause) {
  const Error e = FailureOf({});
  EXPECT_EQ(e.detail,
            "work completion remote operation error (status 11, vendor_err 0x0, qp 0x00001a); "
            "likely cause: remote operation error: the peer could not complete the request");
}

TEST(PollOne, WhatThePeerSaysSoonAfterIsAppended) {
  int calls = 0;
  CompletionWait wait;
  wait.watch = [&calls]() -> Result<void> {
    if (++calls < 3) return Ok();  // the peer's message is still on its way
    return Error{ErrorCode::kProtocol, 0, "RECV", "",
                 "the peer aborted during traffic (ping-pong): the peer aborted: server "
                 "interrupted (SIGINT)"};
  };
  const Error e = FailureOf(wait);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(e.detail.rfind("work completion remote operation error (status 11", 0), 0u) << e.detail;
  EXPECT_NE(e.detail.find("; the peer aborted during traffic (ping-pong): the peer aborted: server "
                          "interrupted (SIGINT)"),
            std::string::npos)
      << e.detail;
}

TEST(PollOne, APeerThatSaysNothingLeavesTheCompletionsError) {
  int calls = 0;
  CompletionWait wait;
  wait.watch = [&calls]() -> Result<void> {
    ++calls;
    return Ok();
  };
  const Error e = FailureOf(wait);
  EXPECT_GE(calls, 2);  // asked again within the grace, then given up on
  EXPECT_EQ(e.detail, FailureOf({}).detail);
}

}  // namespace
}  // namespace qpconnect::verbs
