// SPDX-License-Identifier: MIT
#include "qpconnect/address_prefix.h"

#include <gtest/gtest.h>

namespace qpconnect {
namespace {

Gid G(const char* text) { return *GidFromString(text); }

GidEntry Entry(const char* text, uint8_t prefix, const char* netdev = "veth0") {
  Gid g = G(text);
  GidEntry e{1, g, GidType::kRoceV2, FamilyOfGid(g, GidType::kRoceV2), netdev};
  e.prefix_len = prefix;
  return e;
}

TEST(InSubnet, Ipv4PrefixesCountTheIpv4Bits) {
  EXPECT_TRUE(InSubnet(G("::ffff:10.99.0.1"), 24, G("::ffff:10.99.0.200")));
  EXPECT_FALSE(InSubnet(G("::ffff:10.99.0.1"), 24, G("::ffff:10.99.1.1")));
  EXPECT_TRUE(InSubnet(G("::ffff:10.99.0.1"), 23, G("::ffff:10.99.1.1")));
  EXPECT_FALSE(InSubnet(G("::ffff:10.99.0.1"), 25, G("::ffff:10.99.0.129")));
  EXPECT_TRUE(InSubnet(G("::ffff:10.99.0.1"), 32, G("::ffff:10.99.0.1")));
  EXPECT_FALSE(InSubnet(G("::ffff:10.99.0.1"), 33, G("::ffff:10.99.0.1")));  // beyond IPv4
}

TEST(InSubnet, Ipv6AndUnknownAndMixedFamilies) {
  EXPECT_TRUE(InSubnet(G("fd99::1"), 64, G("fd99::2")));
  EXPECT_FALSE(InSubnet(G("fd99::1"), 64, G("fd98::2")));
  EXPECT_TRUE(InSubnet(G("fe80::aff:fe63:1"), 64, G("fe80::aff:fe63:2")));
  EXPECT_FALSE(InSubnet(G("fd99::1"), 0, G("fd99::1")));  // unknown prefix
  // An IPv4-mapped address is never in an IPv6 subnet, nor the reverse.
  EXPECT_FALSE(InSubnet(G("::"), 1, G("::ffff:10.99.0.1")));
  EXPECT_FALSE(InSubnet(G("::ffff:10.99.0.1"), 8, G("a00::1")));
}

TEST(SubnetRelationOf, IsSymmetricAndNamesUnknownPrefixes) {
  const GidEntry a = Entry("::ffff:10.99.0.1", 24), b = Entry("::ffff:10.99.0.2", 24);
  const GidEntry other = Entry("::ffff:10.88.0.2", 24);
  const GidEntry old = Entry("::ffff:10.99.0.3", 0);  // an older writer's
  EXPECT_EQ(SubnetRelationOf(a, b), SubnetRelation::kShared);
  EXPECT_EQ(SubnetRelationOf(a, other), SubnetRelation::kApart);
  EXPECT_EQ(SubnetRelationOf(other, a), SubnetRelation::kApart);
  EXPECT_EQ(SubnetRelationOf(a, old), SubnetRelation::kUnknown);
  EXPECT_EQ(SubnetRelationOf(old, a), SubnetRelation::kUnknown);
  EXPECT_EQ(SubnetRelationOf(other, old), SubnetRelation::kApart);  // the known one excludes it
  // A /16 on one side holds the /24 of the other, but not the reverse: apart.
  const GidEntry wide = Entry("::ffff:10.99.7.1", 16);
  EXPECT_EQ(SubnetRelationOf(wide, a), SubnetRelation::kApart);
  EXPECT_EQ(SubnetRelationOf(a, wide), SubnetRelation::kApart);
}

TEST(PublishPrefixLengths, MatchesAddressAndNetdev) {
  EndpointInfo e;
  e.gid_table = {Entry("fe80::aff:fe63:1", 0), Entry("::ffff:10.99.0.1", 0),
                 Entry("::ffff:10.88.0.1", 0), Entry("::ffff:10.99.0.1", 0, "veth9")};
  e.gid_table[0].index = 0;
  e.gid_table[2].index = 2;
  e.gid_table[3].index = 3;
  e.path.sgid = e.gid_table[1];
  PublishPrefixLengths(e, {{"veth0", G("fe80::aff:fe63:1"), 64},
                           {"veth0", G("::ffff:10.99.0.1"), 24},
                           {"veth1", G("::ffff:10.88.0.1"), 16},  // another netdev's
                           {"veth9", G("::ffff:10.99.0.1"), 28}});
  EXPECT_EQ(e.gid_table[0].prefix_len, 64);
  EXPECT_EQ(e.gid_table[1].prefix_len, 24);
  EXPECT_EQ(e.gid_table[2].prefix_len, 0);  // not on veth0: unknown
  EXPECT_EQ(e.gid_table[3].prefix_len, 28);
  EXPECT_EQ(e.path.sgid->prefix_len, 24);
}

TEST(AddressWithPrefix, PrintsIpv4PlainAndUnknownAsQuestionMark) {
  EXPECT_EQ(AddressWithPrefix(Entry("::ffff:10.99.0.1", 24)), "10.99.0.1/24");
  EXPECT_EQ(AddressWithPrefix(Entry("fd99::1", 64)), "fd99::1/64");
  EXPECT_EQ(AddressWithPrefix(Entry("::ffff:10.99.0.1", 0)), "10.99.0.1/?");
}

}  // namespace
}  // namespace qpconnect
