// SPDX-License-Identifier: MIT
#include "qpconnect/endpoint.h"

#include <gtest/gtest.h>

namespace qpconnect {
namespace {

TEST(Mtu, BytesRoundTrip) {
  for (int b : {256, 512, 1024, 2048, 4096}) EXPECT_EQ(MtuBytes(MtuFromBytes(b)), b);
  EXPECT_EQ(MtuFromBytes(1500), Mtu::kInvalid);
  EXPECT_EQ(MtuBytes(static_cast<Mtu>(9)), 0);
  EXPECT_FALSE(IsValidMtu(Mtu::kInvalid));
}

TEST(Gid, ParsesAndPrintsText) {
  auto g = GidFromString("fe80::202:c9ff:fe01:203");
  ASSERT_TRUE(g);
  EXPECT_EQ(GidToString(*g), "fe80::202:c9ff:fe01:203");
  EXPECT_TRUE(IsLinkLocalGid(*g));
  EXPECT_FALSE(IsIpv4MappedGid(*g));
  EXPECT_EQ(GidSubnetPrefix(*g), 0xfe80000000000000ULL);
  EXPECT_FALSE(GidFromString("not-a-gid"));
}

TEST(Gid, ClassifiesFamilies) {
  auto v4 = *GidFromString("::ffff:10.99.0.1");
  EXPECT_TRUE(IsIpv4MappedGid(v4));
  EXPECT_EQ(FamilyOfGid(v4, GidType::kRoceV2), GidFamily::kIpv4);
  auto v6 = *GidFromString("2001:db8::1");
  EXPECT_EQ(FamilyOfGid(v6, GidType::kRoceV2), GidFamily::kIpv6);
  EXPECT_EQ(FamilyOfGid(v6, GidType::kIb), GidFamily::kUnspecified);
  EXPECT_TRUE(IsZeroGid(Gid{}));
  EXPECT_TRUE(IsMulticastGid(*GidFromString("ff02::1")));
}

}  // namespace
}  // namespace qpconnect
