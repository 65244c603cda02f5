// SPDX-License-Identifier: MIT
#include "qpconnect/gid_recheck.h"

#include <gtest/gtest.h>

#include <string>

namespace qpconnect {
namespace {

GidEntry Entry(uint16_t index, const char* text) {
  Gid g = *GidFromString(text);
  return {index, g, GidType::kRoceV2, FamilyOfGid(g, GidType::kRoceV2), "veth1"};
}

const GidEntry kChosen = Entry(1, "::ffff:10.99.0.2");

TEST(CheckGidUnchanged, PassesWhenTheEntryIsStillThere) {
  EXPECT_FALSE(CheckGidUnchanged(kChosen, {Entry(0, "fe80::2"), kChosen}));
}

TEST(CheckGidUnchanged, NamesARemovedAddress) {
  auto f = CheckGidUnchanged(kChosen, {Entry(0, "fe80::2")});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "gid-changed-before-rtr");
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(f->local_value, "[1] ::ffff:10.99.0.2 roce-v2");
  EXPECT_NE(f->message.find("gone from the table"), std::string::npos) << f->message;
}

TEST(CheckGidUnchanged, NamesAMovedIndex) {
  auto f = CheckGidUnchanged(kChosen, {Entry(0, "fe80::2"), Entry(3, "::ffff:10.99.0.2")});
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("moved to index 3"), std::string::npos) << f->message;
}

TEST(CheckGidUnchanged, NamesAnotherGidAtTheIndex) {
  auto f = CheckGidUnchanged(kChosen, {Entry(1, "::ffff:10.99.0.9")});
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("index 1 now holds [1] ::ffff:10.99.0.9 roce-v2"), std::string::npos)
      << f->message;
  EXPECT_EQ(f->remote_value, "");  // the peer's GID is not what changed
}

}  // namespace
}  // namespace qpconnect
