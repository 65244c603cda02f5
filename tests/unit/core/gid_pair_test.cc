// SPDX-License-Identifier: MIT
#include "qpconnect/gid_pair.h"

#include <gtest/gtest.h>

#include <string>

namespace qpconnect {
namespace {

GidEntry Entry(uint16_t index, const char* text, GidType type = GidType::kRoceV2) {
  Gid g = *GidFromString(text);
  return {index, g, type, FamilyOfGid(g, type), "veth0"};
}

// An rxe-like RoCE side: [0] link-local, [1] ::ffff:10.99.0.<octet>, the
// IPv4 entry picked alone, open to the joint choice.
EndpointInfo Side(int octet, uint64_t guid) {
  EndpointInfo e;
  e.identity = {"host" + std::to_string(octet), "rxe" + std::to_string(octet), guid};
  e.port.link_layer = LinkLayer::kEthernet;
  const std::string ll = "fe80::aff:fe63:" + std::to_string(octet);
  const std::string v4 = "::ffff:10.99.0." + std::to_string(octet);
  e.gid_table = {Entry(0, ll.c_str()), Entry(1, v4.c_str())};
  e.path.sgid = e.gid_table[1];
  e.path.gid_choice = GidChoice::kJoint;
  e.qps.push_back({0x11, 0, std::nullopt});
  return e;
}

// The IPv4 address removed: only the link-local entry left, picked alone.
void LoseIpv4(EndpointInfo& e) {
  e.gid_table.resize(1);
  e.path.sgid = e.gid_table[0];
}

GidPairChoice Choose(const EndpointInfo& l, const EndpointInfo& r, std::vector<Gid> oob = {}) {
  return ChooseGidPair({&l, &r, std::move(oob)});
}

TEST(ChooseGidPair, BothIpv4TakesTheIpv4Pair) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  auto c = Choose(a, b);
  ASSERT_EQ(c.outcome, GidPairOutcome::kChosen) << c.why;
  EXPECT_EQ(c.local->index, 1);
  EXPECT_EQ(c.remote->index, 1);
  // The other three pairs are named: link-local ruled out, families differ.
  ASSERT_EQ(c.others.size(), 3u);
  for (const auto& v : c.others) EXPECT_FALSE(v.compatible) << v.why;
  EXPECT_NE(c.others[0].why.find("link-local"), std::string::npos) << c.others[0].why;
  EXPECT_NE(c.others[1].why.find("families differ"), std::string::npos) << c.others[1].why;
}

TEST(ChooseGidPair, OneSideLostIpv4TakesTheLinkLocalPair) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  LoseIpv4(b);
  auto c = Choose(a, b);
  ASSERT_EQ(c.outcome, GidPairOutcome::kChosen) << c.why;
  EXPECT_EQ(GidToString(c.local->gid), "fe80::aff:fe63:1");
  EXPECT_EQ(GidToString(c.remote->gid), "fe80::aff:fe63:2");
  EXPECT_NE(c.why.find("no routable pair"), std::string::npos) << c.why;
  ASSERT_EQ(c.others.size(), 1u);
  EXPECT_NE(c.others[0].why.find("families differ (ipv4 / ipv6)"), std::string::npos);
}

TEST(ChooseGidPair, PrefersRoceV2OverV1) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  for (auto* e : {&a, &b}) {
    const GidEntry v4 = e->gid_table[1];
    e->gid_table = {Entry(2, GidToString(v4.gid).c_str(), GidType::kRoceV1), v4};
    e->path.sgid = e->gid_table[0];  // both picked v1 alone
  }
  auto c = Choose(a, b);
  ASSERT_EQ(c.outcome, GidPairOutcome::kChosen) << c.why;
  EXPECT_EQ(c.local->type, GidType::kRoceV2);
  EXPECT_EQ(c.remote->type, GidType::kRoceV2);
  bool v1_named = false;
  for (const auto& v : c.others) {
    if (v.compatible) v1_named |= v.why == "ranked lower: roce-v1 (v2 preferred)";
  }
  EXPECT_TRUE(v1_named);
}

TEST(ChooseGidPair, PrefersTheOutOfBandAddresses) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  a.gid_table.push_back(Entry(2, "2001:db8::1"));
  b.gid_table.push_back(Entry(2, "2001:db8::2"));
  auto c = Choose(a, b, {*GidFromString("2001:db8::1"), *GidFromString("2001:db8::2")});
  ASSERT_EQ(c.outcome, GidPairOutcome::kChosen) << c.why;
  EXPECT_EQ(c.local->index, 2);
  EXPECT_NE(c.why.find("out-of-band connection's two ends"), std::string::npos) << c.why;
  // Without the out-of-band addresses IPv4 wins, as SelectGid's default.
  EXPECT_EQ(Choose(a, b).local->index, 1);
}

TEST(ChooseGidPair, PinnedIndexOnOneSideConstrainsThePeer) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  b.gid_table.push_back(Entry(2, "2001:db8::2"));
  b.path.sgid = b.gid_table[2];
  b.path.gid_choice = GidChoice::kPinned;
  a.gid_table.push_back(Entry(2, "2001:db8::1"));
  auto c = Choose(a, b);
  ASSERT_EQ(c.outcome, GidPairOutcome::kChosen) << c.why;
  EXPECT_EQ(c.remote->index, 2);
  EXPECT_EQ(GidToString(c.local->gid), "2001:db8::1");
  for (const auto& v : c.others) {
    if (v.remote.index != 2) {
      EXPECT_EQ(v.why, "the remote side pinned GID index 2 (-g)");
    }
  }
}

TEST(ChooseGidPair, PinnedLinkLocalIsNotFollowedWhereARoutablePairExists) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  b.path.sgid = b.gid_table[0];  // -g 0 on the client: link-local
  b.path.gid_choice = GidChoice::kPinned;
  auto c = Choose(a, b);
  EXPECT_EQ(c.outcome, GidPairOutcome::kNone);
  auto f = GidPairFinding(c);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "gid-pair-none");
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("routable pair exists"), std::string::npos) << f->message;
}

TEST(ChooseGidPair, NoCompatiblePairNamesEachRejection) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  a.gid_table = {Entry(1, "::ffff:10.99.0.1", GidType::kRoceV1)};  // v1 only
  a.path.sgid = a.gid_table[0];
  LoseIpv4(b);  // v2 link-local only
  auto c = Choose(a, b);
  ASSERT_EQ(c.outcome, GidPairOutcome::kNone);
  ASSERT_EQ(c.others.size(), 1u);
  EXPECT_NE(c.others[0].why.find("types differ (roce-v1 / roce-v2)"), std::string::npos);
  auto f = GidPairFinding(c);
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("::ffff:10.99.0.1 / fe80::aff:fe63:2: types differ"), std::string::npos)
      << f->message;
}

TEST(ChooseGidPair, BothSidesComputeTheSamePair) {
  // Two IPv4 entries a side, at different indices, that tie on everything
  // but their indices (neither side picked one of them alone).
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  a.gid_table.push_back(Entry(3, "::ffff:10.98.0.1"));
  b.gid_table = {b.gid_table[0], Entry(4, "::ffff:10.98.0.2"), Entry(5, "::ffff:10.99.0.2")};
  a.path.sgid = a.gid_table[0];
  b.path.sgid = b.gid_table[0];
  const std::vector<Gid> oob = {*GidFromString("::ffff:127.0.0.1")};
  auto ab = Choose(a, b, oob);
  auto ba = Choose(b, a, oob);
  ASSERT_EQ(ab.outcome, GidPairOutcome::kChosen) << ab.why;
  ASSERT_EQ(ba.outcome, GidPairOutcome::kChosen) << ba.why;
  EXPECT_EQ(*ab.local, *ba.remote);
  EXPECT_EQ(*ab.remote, *ba.local);
  EXPECT_EQ(ab.local->index, 1);
  EXPECT_EQ(ab.remote->index, 4);
  EXPECT_EQ(ab.others.size(), ba.others.size());
  // One side without its IPv4 entries: the same link-local pair from both.
  LoseIpv4(b);
  ab = Choose(a, b, oob);
  ba = Choose(b, a, oob);
  ASSERT_EQ(ab.outcome, GidPairOutcome::kChosen) << ab.why;
  EXPECT_EQ(*ab.local, *ba.remote);
  EXPECT_EQ(*ab.remote, *ba.local);
}

TEST(ChooseGidPair, NotAppliedWithAPeerThatDoesNotTakePart) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  b.path.gid_choice = GidChoice::kOwn;
  EXPECT_EQ(Choose(a, b).outcome, GidPairOutcome::kNotApplied);
  EXPECT_FALSE(GidPairFinding(Choose(a, b)));
  b.path.gid_choice = GidChoice::kPinned;
  a.path.gid_choice = GidChoice::kPinned;
  EXPECT_EQ(Choose(a, b).outcome, GidPairOutcome::kNotApplied);
  a.port.link_layer = LinkLayer::kInfiniBand;
  a.path.gid_choice = GidChoice::kJoint;
  EXPECT_EQ(Choose(a, b).outcome, GidPairOutcome::kNotApplied);
}

TEST(JoinGidChoice, AnAutomaticRoceGidJoinsAPinnedOneStays) {
  EndpointInfo a = Side(1, 1);
  a.path.gid_choice = GidChoice::kOwn;
  JoinGidChoice(a);
  EXPECT_EQ(a.path.gid_choice, GidChoice::kJoint);
  EndpointInfo pinned = Side(2, 2);
  pinned.path.gid_choice = GidChoice::kPinned;
  JoinGidChoice(pinned);
  EXPECT_EQ(pinned.path.gid_choice, GidChoice::kPinned);
  EndpointInfo ib = Side(3, 3);
  ib.path.gid_choice = GidChoice::kOwn;
  ib.port.link_layer = LinkLayer::kInfiniBand;
  JoinGidChoice(ib);
  EXPECT_EQ(ib.path.gid_choice, GidChoice::kOwn);
}

TEST(ApplyGidPair, WritesTheChosenPairIntoBothDescriptions) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  LoseIpv4(b);
  ASSERT_EQ(a.path.sgid->index, 1);  // each side's own pick: IPv4 and link-local
  auto c = ApplyGidPair(a, b, {});
  ASSERT_EQ(c.outcome, GidPairOutcome::kChosen) << c.why;
  EXPECT_EQ(GidToString(a.path.sgid->gid), "fe80::aff:fe63:1");
  EXPECT_EQ(GidToString(b.path.sgid->gid), "fe80::aff:fe63:2");
  // Not applied (a side keeps its own): the descriptions are left as they were.
  EndpointInfo c1 = Side(1, 1), d = Side(2, 2);
  LoseIpv4(d);
  d.path.gid_choice = GidChoice::kOwn;
  auto none = ApplyGidPair(c1, d, {});
  EXPECT_EQ(none.outcome, GidPairOutcome::kNotApplied);
  EXPECT_EQ(c1.path.sgid->index, 1);
  EXPECT_EQ(GidToString(d.path.sgid->gid), "fe80::aff:fe63:2");
}

// Issue 39: subnets. An rxe-like side whose netdev holds `addrs` (IPv4
// "a.b.c.d/len", in the order they were added: GID indices 1, 2, ...), the
// first picked alone, every prefix published.
EndpointInfo SubnetSide(int octet, uint64_t guid, std::vector<std::pair<std::string, int>> addrs) {
  EndpointInfo e = Side(octet, guid);
  e.gid_table.resize(1);
  e.gid_table[0].prefix_len = 64;
  uint16_t index = 1;
  for (const auto& [addr, len] : addrs) {
    GidEntry g = Entry(index++, ("::ffff:" + addr).c_str());
    g.prefix_len = static_cast<uint8_t>(len);
    e.gid_table.push_back(g);
  }
  e.path.sgid = e.gid_table[1];
  return e;
}

// Both sides' choices from the same two descriptions: the same pair.
void ExpectSymmetric(const GidPairChoice& ab, const GidPairChoice& ba) {
  ASSERT_EQ(ab.outcome, GidPairOutcome::kChosen) << ab.why;
  ASSERT_EQ(ba.outcome, GidPairOutcome::kChosen) << ba.why;
  EXPECT_EQ(*ab.local, *ba.remote);
  EXPECT_EQ(*ab.remote, *ba.local);
  EXPECT_EQ(ab.others.size(), ba.others.size());
}

std::string WhyNot(const GidPairChoice& c, const std::string& local, const std::string& remote) {
  for (const auto& v : c.others) {
    if (GidToString(v.local.gid) == local && GidToString(v.remote.gid) == remote) return v.why;
  }
  return "(pair not listed)";
}

TEST(ChooseGidPair, ASecondarySubnetOnTheClientAddedFirstIsNotTaken) {
  // The case: the client's netdev got 10.88.0.2/24 before
  // 10.99.0.2/24 and picked it alone; the server has 10.99.0.1/24 only.
  EndpointInfo server = SubnetSide(1, 1, {{"10.99.0.1", 24}});
  EndpointInfo client = SubnetSide(2, 2, {{"10.88.0.2", 24}, {"10.99.0.2", 24}});
  // The out-of-band connection ran over lo between two local addresses.
  const std::vector<Gid> oob = {*GidFromString("::ffff:10.99.0.1"),
                                *GidFromString("::ffff:10.99.0.1")};
  auto cs = Choose(client, server, oob);
  auto sc = Choose(server, client, oob);
  ExpectSymmetric(cs, sc);
  EXPECT_EQ(GidToString(cs.local->gid), "::ffff:10.99.0.2");
  EXPECT_EQ(GidToString(cs.remote->gid), "::ffff:10.99.0.1");
  EXPECT_NE(cs.why.find("in one subnet (10.99.0.2/24 and 10.99.0.1/24)"), std::string::npos)
      << cs.why;
  EXPECT_EQ(WhyNot(cs, "::ffff:10.88.0.2", "::ffff:10.99.0.1"),
            "ranked lower: in different subnets (10.88.0.2/24 and 10.99.0.1/24): only a router "
            "joins them, and a pair in one subnet exists");
  EXPECT_EQ(WhyNot(sc, "::ffff:10.99.0.1", "::ffff:10.88.0.2"),
            "ranked lower: in different subnets (10.99.0.1/24 and 10.88.0.2/24): only a router "
            "joins them, and a pair in one subnet exists");
  auto f = GidPairFinding(cs);
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("::ffff:10.88.0.2 / ::ffff:10.99.0.1: ranked lower: in different "
                            "subnets"),
            std::string::npos)
      << f->message;
}

TEST(ChooseGidPair, ASecondarySubnetEitherSideBeforeOrAfterTheRightOne) {
  const std::vector<std::pair<std::string, int>> right_server = {{"10.99.0.1", 24}};
  const std::vector<std::pair<std::string, int>> right_client = {{"10.99.0.2", 24}};
  struct Case {
    std::vector<std::pair<std::string, int>> server, client;
  } cases[] = {
      {{{"10.88.0.1", 24}, {"10.99.0.1", 24}}, right_client},  // server, before
      {{{"10.99.0.1", 24}, {"10.88.0.1", 24}}, right_client},  // server, after
      {right_server, {{"10.99.0.2", 24}, {"10.88.0.2", 24}}},  // client, after
      {{{"10.88.0.1", 24}, {"10.99.0.1", 24}}, {{"10.77.0.2", 24}, {"10.99.0.2", 24}}},
  };
  for (const Case& k : cases) {
    EndpointInfo server = SubnetSide(1, 1, k.server), client = SubnetSide(2, 2, k.client);
    for (const std::vector<Gid>& oob :
         {std::vector<Gid>{}, std::vector<Gid>{*GidFromString("::ffff:10.77.0.2"),
                                               *GidFromString("::ffff:10.77.0.1")}}) {
      auto cs = Choose(client, server, oob);
      auto sc = Choose(server, client, oob);
      ExpectSymmetric(cs, sc);
      EXPECT_EQ(GidToString(cs.local->gid), "::ffff:10.99.0.2") << cs.why;
      EXPECT_EQ(GidToString(cs.remote->gid), "::ffff:10.99.0.1") << cs.why;
    }
  }
}

TEST(ChooseGidPair, WithoutThePeersPrefixesTheSubnetsDoNotDecide) {
  // A peer from before issue 39 publishes no prefix length and ranks
  // without subnets: so does this side, or the two would differ.
  EndpointInfo server = SubnetSide(1, 1, {{"10.99.0.1", 24}});
  EndpointInfo client = SubnetSide(2, 2, {{"10.88.0.2", 24}, {"10.99.0.2", 24}});
  for (GidEntry& g : server.gid_table) g.prefix_len = 0;
  server.path.sgid->prefix_len = 0;
  auto cs = Choose(client, server);
  auto sc = Choose(server, client);
  ExpectSymmetric(cs, sc);
  EXPECT_EQ(GidToString(cs.local->gid), "::ffff:10.88.0.2");  // picked alone, as before
  EXPECT_EQ(WhyNot(cs, "::ffff:10.99.0.2", "::ffff:10.99.0.1"),
            "ranked lower: not the GIDs the two sides picked alone");
}

TEST(ChooseGidPair, AmongSharedSubnetsTheOutOfBandSubnetsDecide) {
  // Two subnets on both sides; the exchange ran between 10.88.0.x, which are
  // not GIDs of these ports (another netdev in those subnets).
  EndpointInfo server = SubnetSide(1, 1, {{"10.99.0.1", 24}, {"10.88.0.1", 24}});
  EndpointInfo client = SubnetSide(2, 2, {{"10.99.0.2", 24}, {"10.88.0.2", 24}});
  const std::vector<Gid> oob = {*GidFromString("::ffff:10.88.0.20"),
                                *GidFromString("::ffff:10.88.0.10")};
  auto cs = Choose(client, server, oob);
  auto sc = Choose(server, client, oob);
  ExpectSymmetric(cs, sc);
  EXPECT_EQ(GidToString(cs.local->gid), "::ffff:10.88.0.2");
  EXPECT_EQ(GidToString(cs.remote->gid), "::ffff:10.88.0.1");
  EXPECT_NE(cs.why.find("the out-of-band connection's family and subnets"), std::string::npos)
      << cs.why;
  EXPECT_EQ(WhyNot(cs, "::ffff:10.99.0.2", "::ffff:10.99.0.1"),
            "ranked lower: not in the out-of-band connection's subnets");
}

TEST(ChooseGidPair, ARoutedPairIsTakenWhenNoneSharesASubnet) {
  // Two subnets joined by a router: the pair the exchange ran over wins;
  // without it, still a pair (routed RoCE v2), not none.
  EndpointInfo server = SubnetSide(1, 1, {{"10.99.0.1", 24}});
  EndpointInfo client = SubnetSide(2, 2, {{"10.88.0.2", 24}, {"10.77.0.2", 24}});
  const std::vector<Gid> oob = {*GidFromString("::ffff:10.77.0.2"),
                                *GidFromString("::ffff:10.99.0.1")};
  auto cs = Choose(client, server, oob);
  ExpectSymmetric(cs, Choose(server, client, oob));
  EXPECT_EQ(GidToString(cs.local->gid), "::ffff:10.77.0.2");
  EXPECT_NE(cs.why.find("the out-of-band connection's two ends"), std::string::npos) << cs.why;
  auto alone = Choose(client, server);
  ExpectSymmetric(alone, Choose(server, client));
  EXPECT_EQ(GidToString(alone.local->gid), "::ffff:10.88.0.2");  // picked alone
}

TEST(GidPairFinding, NamesTheChosenPairAndTheOthers) {
  EndpointInfo a = Side(1, 1), b = Side(2, 2);
  auto f = GidPairFinding(Choose(a, b));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, "gid-pair-chosen");
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->local_value, "[1] ::ffff:10.99.0.1 roce-v2");
  EXPECT_NE(f->message.find("not taken: fe80::aff:fe63:1 / fe80::aff:fe63:2: link-local"),
            std::string::npos)
      << f->message;
}

}  // namespace
}  // namespace qpconnect
