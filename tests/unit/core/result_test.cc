// SPDX-License-Identifier: MIT
#include "qpconnect/result.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace qpconnect {
namespace {

Result<int> Half(int v) {
  if (v % 2 != 0) return Error{ErrorCode::kInvalidArgument, 0, "half", "", "odd"};
  return v / 2;
}

Result<int> Quarter(int v) {
  auto h = Half(v);
  if (!h) return std::move(h).error();
  return Half(*h);
}

Result<void> CheckEven(int v) {
  QPC_TRY(Half(v));
  return Ok();
}

TEST(Result, CarriesValueOrError) {
  auto ok = Half(8);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 4);
  auto bad = Half(3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().detail, "odd");
}

TEST(Result, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_FALSE(Quarter(6));
  EXPECT_TRUE(CheckEven(2));
  EXPECT_FALSE(CheckEven(1));
}

TEST(Error, ToStringNamesOperationAttributeAndErrno) {
  Error e{ErrorCode::kVerbs, EINVAL, "ibv_modify_qp INIT->RTR", "path_mtu", "refused"};
  std::string s = e.ToString();
  EXPECT_NE(s.find("ibv_modify_qp INIT->RTR"), std::string::npos);
  EXPECT_NE(s.find("path_mtu"), std::string::npos);
  EXPECT_NE(s.find("errno 22"), std::string::npos);
  EXPECT_NE(s.find("[verbs]"), std::string::npos);
}

TEST(Error, ErrnoErrorNeverReportsSuccess) {
  EXPECT_EQ(ErrnoError(ErrorCode::kIo, 0, "op").sys_errno, EIO);
  EXPECT_EQ(ErrnoError(ErrorCode::kIo, -3, "op").sys_errno, EIO);
  EXPECT_EQ(ErrnoError(ErrorCode::kIo, ENOENT, "op").sys_errno, ENOENT);
}

}  // namespace
}  // namespace qpconnect
