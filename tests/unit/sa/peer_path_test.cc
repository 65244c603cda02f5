// SPDX-License-Identifier: MIT
// The connector's SA query (sa::PeerPathQuery): which destination, P_Key and
// SL it asks for, and its refusals, from two exchanged descriptions.
#include "qpconnect/sa/peer_path.h"

#include <gtest/gtest.h>

#include "unit/validate/fixtures.h"

namespace qpconnect::sa {
namespace {

TEST(PeerPathQuery, SameSubnetAsksForThePeersLidWithItsPathBitsAndOurPkey) {
  test::Pair p = test::IbPair(Transport::kRc);
  p.remote.port.lid = 0x20;
  p.remote.path.src_path_bits = 3;
  p.local.keys.pkey = 0x8001;
  auto q = PeerPathQuery(p.local, p.remote);
  ASSERT_TRUE(q) << q.error().ToString();
  ASSERT_TRUE(q->dlid.has_value());
  EXPECT_EQ(*q->dlid, 0x23);
  EXPECT_FALSE(q->dgid.has_value());
  ASSERT_TRUE(q->pkey.has_value());
  EXPECT_EQ(*q->pkey, 0x8001);
  EXPECT_FALSE(q->sl.has_value());
}

TEST(PeerPathQuery, AnSlGivenIsAskedFor) {
  test::Pair p = test::IbPair(Transport::kRc);
  PeerPathOptions o;
  o.sl = 5;
  auto q = PeerPathQuery(p.local, p.remote, o);
  ASSERT_TRUE(q) << q.error().ToString();
  ASSERT_TRUE(q->sl.has_value());
  EXPECT_EQ(*q->sl, 5);
}

TEST(PeerPathQuery, AcrossSubnetsAsksForThePeersGid) {
  test::Pair p = test::IbPair(Transport::kRc);
  p.remote.port.subnet_prefix = 0xfe80000000000001ULL;
  auto q = PeerPathQuery(p.local, p.remote);
  ASSERT_TRUE(q) << q.error().ToString();
  EXPECT_FALSE(q->dlid.has_value());
  ASSERT_TRUE(q->dgid.has_value());
  EXPECT_EQ(*q->dgid, p.remote.path.sgid->gid);
}

TEST(PeerPathQuery, APeerWithoutLidIsAskedByGid) {
  test::Pair p = test::IbPair(Transport::kRc);
  p.remote.port.lid = 0;
  auto q = PeerPathQuery(p.local, p.remote);
  ASSERT_TRUE(q) << q.error().ToString();
  ASSERT_TRUE(q->dgid.has_value());
}

TEST(PeerPathQuery, APeerWithNeitherLidNorGidIsRefusedNamingLid) {
  test::Pair p = test::IbPair(Transport::kRc);
  p.remote.port.lid = 0;
  p.remote.path.sgid.reset();
  auto q = PeerPathQuery(p.local, p.remote);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(q.error().attribute, "lid");
}

TEST(PeerPathQuery, EthernetOnEitherSideIsRefusedNamingTheLinkLayer) {
  for (int side = 0; side < 2; ++side) {
    test::Pair p = test::IbPair(Transport::kRc);
    (side == 0 ? p.local : p.remote).port.link_layer = LinkLayer::kEthernet;
    auto q = PeerPathQuery(p.local, p.remote);
    ASSERT_FALSE(q) << "side " << side;
    EXPECT_EQ(q.error().code, ErrorCode::kIncompatible);
    EXPECT_EQ(q.error().attribute, "link_layer");
    EXPECT_NE(q.error().detail.find("RoCE"), std::string::npos) << q.error().detail;
  }
}

}  // namespace
}  // namespace qpconnect::sa
