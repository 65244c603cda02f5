// SPDX-License-Identifier: MIT
// ECE's rules over the out-of-band exchange (rdmacm/src/ece.h), each as
// rdma_set_local_ece(3) and rdma-core's librdmacm have it: what the IB CM
// keeps of a vendor id, which ECE a REP returns, what a QP made for a
// request and the active QP at the REP are set to, and rdma_set_local_ece's
// refusals. The flows (REQ, REP, rdma_reject_ece) are cm_table_test's.
#include "ece.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace qpconnect::rdmacm {
namespace {

constexpr uint32_t kMellanox = 0x02c9;

TEST(QpcmEce, TheWireKeepsTheIbCmsTwentyFourBitVendor) {
  EXPECT_EQ(OnWire(Ece{0xab0002c9, 0xffffffff}), (Ece{0x0002c9, 0xffffffff}));
  EXPECT_EQ(OnWire(Ece{kMellanox, 5}), (Ece{kMellanox, 5}));
}

TEST(QpcmEce, SetLocalIsRefusedWithAQpNoVendorOrAMask) {
  EXPECT_EQ(LocalEceRefusal(false, kMellanox, 0), "");
  EXPECT_NE(LocalEceRefusal(true, kMellanox, 0).find("has a QP"), std::string::npos);
  EXPECT_NE(LocalEceRefusal(false, 0, 0).find("vendor_id 0"), std::string::npos);
  EXPECT_NE(LocalEceRefusal(false, kMellanox, 1).find("comp_mask 0x1"), std::string::npos);
}

TEST(QpcmEce, AReplyReturnsTheRequestsVendorWithThisSidesOptions) {
  EXPECT_EQ(ReplyEce(Ece{0x1234, 0x0f}, Ece{kMellanox, 0xff}), (Ece{kMellanox, 0x0f}));
  EXPECT_EQ(ReplyEce(Ece{kMellanox, 3}, Ece{}), (Ece{0, 3}));  // the request carried none
}

TEST(QpcmEce, AQpForARequestTakesTheRequestsEceOrNoOptionsFromAnotherVendor) {
  EXPECT_FALSE(RequestQpEce(Ece{kMellanox, 7}, Ece{}).set);  // no ECE in the request
  EceToSet same = RequestQpEce(Ece{kMellanox, 7}, Ece{kMellanox, 3});
  EXPECT_TRUE(same.set);
  EXPECT_EQ(same.ece, (Ece{kMellanox, 3}));
  EceToSet other = RequestQpEce(Ece{kMellanox, 7}, Ece{0x1234, 3});
  EXPECT_TRUE(other.set);
  EXPECT_EQ(other.ece, (Ece{kMellanox, 0}));
  // A provider without ECE (rxe: ibv_query_ece says EOPNOTSUPP, vendor 0).
  EXPECT_EQ(RequestQpEce(Ece{}, Ece{kMellanox, 3}).ece, (Ece{0, 0}));
}

TEST(QpcmEce, TheActiveQpTakesTheRepsEceAndRefusesAnotherVendor) {
  auto none = ReplyQpEce(Ece{kMellanox, 7}, Ece{});
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, (Ece{kMellanox, 0}));  // a peer without ECE: ours, no options
  auto same = ReplyQpEce(Ece{kMellanox, 7}, Ece{kMellanox, 3});
  ASSERT_TRUE(same);
  EXPECT_EQ(*same, (Ece{kMellanox, 3}));
  auto other = ReplyQpEce(Ece{kMellanox, 7}, Ece{0x1234, 3});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(other.error().sys_errno, EINVAL);
  EXPECT_EQ(other.error().attribute, "vendor_id");
}

}  // namespace
}  // namespace qpconnect::rdmacm
