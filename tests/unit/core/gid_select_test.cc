// SPDX-License-Identifier: MIT
#include "qpconnect/gid_select.h"

#include <gtest/gtest.h>

namespace qpconnect {
namespace {

GidEntry Entry(uint16_t index, const char* text, GidType type) {
  Gid g = *GidFromString(text);
  return {index, g, type, FamilyOfGid(g, type), "eth0"};
}

std::vector<GidEntry> RoceTable() {
  return {Entry(0, "fe80::1", GidType::kRoceV1), Entry(1, "fe80::1", GidType::kRoceV2),
          Entry(2, "::ffff:10.0.0.1", GidType::kRoceV1),
          Entry(3, "::ffff:10.0.0.1", GidType::kRoceV2), Entry(4, "2001:db8::1", GidType::kRoceV2)};
}

TEST(SelectGid, PrefersRoceV2Ipv4OverLinkLocalAndV1) {
  auto g = SelectGid(RoceTable(), LinkLayer::kEthernet, {});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->index, 3);
}

TEST(SelectGid, HonoursRequestedFamily) {
  GidPreference p;
  p.family = GidFamily::kIpv6;
  auto g = SelectGid(RoceTable(), LinkLayer::kEthernet, p);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->index, 4);  // global IPv6 before link-local
}

TEST(SelectGid, SkipsAddressesNotConfiguredOnTheNetdev) {
  auto g = SelectGid(RoceTable(), LinkLayer::kEthernet, {},
                     [](const GidEntry& e) { return e.index != 3; });
  ASSERT_TRUE(g);
  EXPECT_EQ(g->index, 4);  // still v2 and global, though not the family asked for
}

TEST(SelectGid, FallsBackToLinkLocalOnlyWhenNothingElse) {
  std::vector<GidEntry> t = {Entry(0, "fe80::1", GidType::kRoceV2)};
  auto g = SelectGid(t, LinkLayer::kEthernet, {});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->index, 0);
}

TEST(SelectGid, ExplicitIndexMustBeAValidEntry) {
  GidPreference p;
  p.index = 2;
  EXPECT_EQ(SelectGid(RoceTable(), LinkLayer::kEthernet, p)->index, 2);
  p.index = 9;
  auto g = SelectGid(RoceTable(), LinkLayer::kEthernet, p);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().code, ErrorCode::kNotFound);
  EXPECT_NE(g.error().detail.find("index 9"), std::string::npos);
}

TEST(SelectGid, InfiniBandUsesThePortGid) {
  std::vector<GidEntry> t = {Entry(0, "fe80::2:c903:1:203", GidType::kIb)};
  EXPECT_EQ(SelectGid(t, LinkLayer::kInfiniBand, {})->index, 0);
  EXPECT_FALSE(SelectGid({}, LinkLayer::kInfiniBand, {}));
  EXPECT_FALSE(SelectGid({}, LinkLayer::kEthernet, {}));
}

}  // namespace
}  // namespace qpconnect
