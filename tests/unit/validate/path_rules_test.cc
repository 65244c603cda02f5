// SPDX-License-Identifier: MIT
// rules_path.cc beyond the catalogue's one fixture per rule: the notes for
// facts that are absent, a path through a gateway, an older peer, and the
// values and fixes each finding carries.
#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "qpconnect/roce_path.h"

namespace qpconnect::test {
namespace {

constexpr Transport kTransports[] = {Transport::kRc, Transport::kUc, Transport::kUd};

bool IsPathRule(const std::string& id) {
  for (const char* p : {"route-missing", "route-other-netdev", "neighbour-failed",
                        "neighbour-mac-mismatch", "vlan-mismatch", "mtu-above-netdev"}) {
    if (id == p) return true;
  }
  return false;
}

TEST(PathRules, HealthyPathRaisesNothingNotEvenANote) {
  for (Transport t : kTransports) {
    const auto findings = RocePairWithPath(t).Run();
    for (const Finding& f : findings) EXPECT_FALSE(IsPathRule(f.id)) << FindingToString(f);
    EXPECT_TRUE(Problems(findings).empty()) << Dump(findings);
  }
}

TEST(PathRules, SilentWithoutFactsAndOnInfiniBand) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.roce_path.reset();
  for (const Finding& f : p.Run()) EXPECT_FALSE(IsPathRule(f.id)) << FindingToString(f);
  Pair ib = IbPair(Transport::kRc);
  ib.roce_path = RocePairWithPath(Transport::kRc).roce_path;
  ib.roce_path->neighbour->state = NeighbourState::kFailed;
  for (const Finding& f : ib.Run()) EXPECT_FALSE(IsPathRule(f.id)) << FindingToString(f);
}

TEST(PathRules, AbsentFactsAreNotesSayingWhy) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.roce_path->neighbour.reset();
  p.roce_path->neighbour_unknown = "no neighbour entry for 10.0.0.2 on eth0 yet";
  p.roce_path->route.reset();
  p.roce_path->route_unknown = "rtnetlink: Operation not permitted";
  const auto findings = p.Run();
  EXPECT_TRUE(Problems(findings).empty()) << Dump(findings);
  const Finding* n = FindId(findings, "neighbour-failed");
  ASSERT_NE(n, nullptr) << Dump(findings);
  EXPECT_TRUE(n->unchecked);
  EXPECT_NE(n->message.find("no neighbour entry for 10.0.0.2"), std::string::npos) << n->message;
  const Finding* r = FindId(findings, "route-missing");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->unchecked);
  EXPECT_NE(r->message.find("Operation not permitted"), std::string::npos) << r->message;
}

TEST(PathRules, ARouteRefusedByTheKernelIsRouteMissing) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.roce_path->route.reset();
  p.roce_path->route_error = "Network is unreachable";
  const auto p_findings1 = p.Run();
  const Finding* f = FindId(p_findings1, "route-missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->message.find("no route from eth0 to 10.0.0.2: Network is unreachable"),
            std::string::npos)
      << f->message;
  EXPECT_NE(f->fix.find("ip route add 10.0.0.2 dev eth0"), std::string::npos) << f->fix;
}

// Two QPs of one port (two mesh ranks on one device): the peer's GID is
// this port's own, its address local; the device loops the packets back.
TEST(PathRules, ALocalRouteToThisPortsOwnGidIsFine) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.remote.gid_table = p.local.gid_table;
  p.remote.path.sgid = p.local.path.sgid;
  p.remote.netdevs = p.local.netdevs;
  p.roce_path->query.remote = p.local.path.sgid->gid;
  p.roce_path->route = RouteFact{"lo", "", "local", 255, 0};
  p.roce_path->neighbour.reset();
  p.roce_path->neighbour_unknown = "10.0.0.1 is a local address: no neighbour entry";
  const auto findings = p.Run();
  EXPECT_FALSE(HasId(findings, "route-other-netdev")) << Dump(findings);
  // Another host's address routed to lo is still named.
  Pair q = RocePairWithPath(Transport::kRc);
  q.roce_path->route = RouteFact{"lo", "", "local", 255, 0};
  const auto other = q.Run();
  EXPECT_TRUE(HasId(other, "route-other-netdev")) << Dump(other);
}

TEST(PathRules, ThroughAGatewayTheGatewaysMacAndOtherVlansAreFine) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.roce_path->route->gateway = "10.0.0.254";
  p.roce_path->neighbour->address = "10.0.0.254";
  p.roce_path->neighbour->mac = MacAddress{0x02, 0, 0, 0, 0, 0xfe};
  p.roce_path->netdev->vlan_id = 7;
  const auto findings = p.Run();
  EXPECT_TRUE(Problems(findings).empty()) << Dump(findings);
  const Finding* mac = FindId(findings, "neighbour-mac-mismatch");
  ASSERT_NE(mac, nullptr);
  EXPECT_TRUE(mac->unchecked);
  EXPECT_NE(mac->message.find("gateway 10.0.0.254"), std::string::npos) << mac->message;
}

TEST(PathRules, AnOlderPeerWithoutNetdevsIsANote) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.remote.netdevs.clear();
  p.roce_path->neighbour->mac = MacAddress{0x02, 0, 0, 0, 0, 0x99};
  const auto findings = p.Run();
  EXPECT_TRUE(Problems(findings).empty()) << Dump(findings);
  const Finding* mac = FindId(findings, "neighbour-mac-mismatch");
  ASSERT_NE(mac, nullptr);
  EXPECT_TRUE(mac->unchecked);
  EXPECT_NE(mac->message.find("publishes no netdev facts"), std::string::npos) << mac->message;
}

TEST(PathRules, AWrongMacNamesBothMacsAndTheCommand) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.roce_path->neighbour->state = NeighbourState::kPermanent;
  p.roce_path->neighbour->mac = MacAddress{0x02, 0, 0, 0, 0, 0x99};
  const auto p_findings2 = p.Run();
  const Finding* f = FindId(p_findings2, "neighbour-mac-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->local_value, "02:00:00:00:00:99 PERMANENT");
  EXPECT_EQ(f->remote_value, "eth1 02:00:00:00:00:0b");
  EXPECT_EQ(f->fix.rfind("ip neigh replace 10.0.0.2 lladdr 02:00:00:00:00:0b dev eth0", 0), 0u)
      << f->fix;
}

TEST(PathRules, TheMtuFixNamesTheLargestPathMtuThatFits) {
  Pair p = RocePairWithPath(Transport::kRc);
  p.roce_path->netdev->mtu = 1100;
  const auto p_findings3 = p.Run();
  const Finding* f = FindId(p_findings3, "mtu-above-netdev");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->local_value, "1024");
  EXPECT_EQ(f->remote_value, "eth0 MTU 1100");
  EXPECT_NE(f->fix.find("-m 512"), std::string::npos) << f->fix;
  // A route MTU below the netdev's is the limit.
  Pair r = RocePairWithPath(Transport::kRc);
  r.roce_path->route->mtu = 1000;
  const auto r_findings4 = r.Run();
  const Finding* g = FindId(r_findings4, "mtu-above-netdev");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->remote_value, "route MTU 1000");
}

TEST(PathRules, TheFactsLineNamesEveryFact) {
  const RocePathFacts f = *RocePairWithPath(Transport::kRc).roce_path;
  EXPECT_EQ(RocePathText(f),
            "eth0 (02:00:00:00:00:0a, untagged, MTU 1500) -> 10.0.0.2: route dev eth0 table 254, "
            "on link; neighbour 10.0.0.2 02:00:00:00:00:0b REACHABLE");
  const Finding info = RocePathFinding(f);
  EXPECT_EQ(info.id, "path-facts");
  EXPECT_EQ(info.severity, Severity::kInfo);
}

}  // namespace
}  // namespace qpconnect::test
