// SPDX-License-Identifier: MIT
// Issue 31 item 5: the RoCE paths of connected QPs in a snapshot
// (kernel_paths.h) over injected sources, the "paths" member of the snapshot
// file, AddSnapshot() attaching them, and the live judge's
// roce-path-broken on a wrong neighbour entry and a removed address.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "live_fixtures.h"
#include "qpconnect/observe/kernel_paths.h"
#include "qpconnect/observe/snapshot_json.h"

namespace qpconnect {
namespace {

GidEntry Entry(uint16_t index, const char* text, const char* netdev) {
  Gid g = *GidFromString(text);
  return {index, g, GidType::kRoceV2, FamilyOfGid(g, GidType::kRoceV2), netdev};
}

KernelQp Rc(const char* device, uint32_t lqpn, uint32_t rqpn, int pid) {
  KernelQp q;
  q.device = device;
  q.port = 1;
  q.lqpn = lqpn;
  q.rqpn = rqpn;
  q.type = "RC";
  q.state = "RTS";
  q.pid = pid;
  return q;
}

// The lab: rxe0 on veth0 (10.99.0.1), rxe1 on veth1 (10.99.0.2); rxe1's
// neighbour entry for 10.99.0.1 is `mac`. `removed`: rxe1's IPv4 GID gone.
kernel::PathSources Lab(const char* mac, bool removed = false) {
  kernel::PathSources s;
  s.gids = [removed](const std::string& device, uint8_t) {
    if (device == "rxe0") {
      return std::vector<GidEntry>{Entry(0, "fe80::aff:fe63:1", "veth0"),
                                   Entry(1, "::ffff:10.99.0.1", "veth0")};
    }
    std::vector<GidEntry> g{Entry(0, "fe80::aff:fe63:2", "veth1")};
    if (!removed) g.push_back(Entry(1, "::ffff:10.99.0.2", "veth1"));
    return g;
  };
  s.path = [mac](const RocePathQuery& q) {
    RocePathFacts f;
    f.query = q;
    const bool client = q.local.netdev == "veth1";
    f.netdev =
        NetdevInfo{q.local.netdev,
                   *MacFromString(client ? "02:00:0a:63:00:02" : "02:00:0a:63:00:01"), 0, 1500};
    f.route = RouteFact{q.local.netdev, "", "unicast", client ? 101u : 100u, 0};
    f.neighbour =
        NeighbourFact{GidAddressText(q.remote), q.local.netdev, NeighbourState::kPermanent,
                      MacFromString(client ? mac : "02:00:0a:63:00:02")};
    return f;
  };
  s.netdev = [](const std::string& name) -> std::optional<NetdevInfo> {
    return NetdevInfo{
        name, *MacFromString(name == "veth0" ? "02:00:0a:63:00:01" : "02:00:0a:63:00:02"), 0, 1500};
  };
  return s;
}

TEST(ReadQpPaths, ReadsBothSidesOfAConnectedPair) {
  KernelSample sample;
  sample.qps = {Rc("rxe0", 17, 18, 100), Rc("rxe1", 18, 17, 200)};
  KernelQp gsi = Rc("rxe0", 1, 0, 0);
  gsi.type = "GSI";
  sample.qps.push_back(gsi);
  auto paths = kernel::ReadQpPaths(sample, Lab("02:00:00:00:00:99"));
  ASSERT_EQ(paths.size(), 2u);
  const ObservedPath& c = paths[1];
  EXPECT_EQ(c.device, "rxe1");
  EXPECT_EQ(c.lqpn, 18u);
  EXPECT_EQ(c.source, "10.99.0.2");
  EXPECT_EQ(c.destination, "10.99.0.1");
  EXPECT_EQ(c.peer, "rxe0 QP 17");
  EXPECT_EQ(c.netdev, "veth1");
  EXPECT_EQ(c.neighbour_mac, "02:00:00:00:00:99");
  EXPECT_EQ(c.neighbour_state, "PERMANENT");
  EXPECT_EQ(c.peer_netdev, "veth0");
  EXPECT_EQ(c.peer_mac, "02:00:0a:63:00:01");
  EXPECT_TRUE(c.unknown.empty()) << c.unknown;
  EXPECT_NE(c.facts.find("route dev veth1 table 101"), std::string::npos) << c.facts;
}

TEST(ReadQpPaths, SaysWhyWhatItCannotRead) {
  KernelSample sample;
  sample.qps = {Rc("rxe0", 17, 99, 100), Rc("rxe1", 18, 17, 200)};  // 17 does not name 18 back
  auto paths = kernel::ReadQpPaths(sample, Lab("02:00:0a:63:00:01"));
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_TRUE(paths[0].destination.empty());
  EXPECT_NE(paths[0].unknown.find("does not show a QP's destination GID"), std::string::npos);
  EXPECT_NE(paths[0].unknown.find("rqpn 99"), std::string::npos) << paths[0].unknown;

  sample.qps = {Rc("rxe0", 17, 18, 100), Rc("rxe1", 18, 17, 200)};
  paths = kernel::ReadQpPaths(sample, Lab("02:00:0a:63:00:01", /*removed=*/true));
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_TRUE(paths[0].destination_gone);
  EXPECT_TRUE(paths[1].source_gone);
  EXPECT_NE(paths[1].unknown.find("rxe1 port 1 has no routable RoCE v2 GID"), std::string::npos);
}

TEST(ReadSysfsGids, ReadsEntriesTypesAndNetdevs) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "qpc_sysfs_gids";
  fs::remove_all(root);
  const fs::path base = root / "class/infiniband/rxe0/ports/1";
  fs::create_directories(base / "gids");
  fs::create_directories(base / "gid_attrs/types");
  fs::create_directories(base / "gid_attrs/ndevs");
  auto put = [](const fs::path& p, const char* text) { std::ofstream(p) << text << "\n"; };
  put(base / "gids/0", "fe80:0000:0000:0000:0000:0aff:fe63:0001");
  put(base / "gids/1", "0000:0000:0000:0000:0000:ffff:0a63:0001");
  put(base / "gids/2", "0000:0000:0000:0000:0000:0000:0000:0000");
  put(base / "gid_attrs/types/0", "RoCE v2");
  put(base / "gid_attrs/types/1", "RoCE v2");
  put(base / "gid_attrs/ndevs/0", "veth0");
  put(base / "gid_attrs/ndevs/1", "veth0");
  auto gids = kernel::ReadSysfsGids("rxe0", 1, root.string());
  fs::remove_all(root);
  ASSERT_EQ(gids.size(), 2u);  // the zero entry is not one
  EXPECT_EQ(gids[1].index, 1);
  EXPECT_EQ(GidToString(gids[1].gid), "::ffff:10.99.0.1");
  EXPECT_EQ(gids[1].type, GidType::kRoceV2);
  EXPECT_EQ(gids[1].netdev, "veth0");
  auto routable = kernel::RoutableGid(gids);
  ASSERT_TRUE(routable);
  EXPECT_EQ(routable->index, 1);
  EXPECT_FALSE(kernel::RoutableGid({gids[0]}));  // link-local only
}

TEST(SnapshotFile, PathsRoundTripAndReachTheObservation) {
  Snapshot s;
  s.host = "lab";
  KernelSample sample;
  sample.qps = {Rc("rxe0", 17, 17, 100), Rc("rxe1", 17, 17, 200)};
  s.samples = {sample};
  ObservedPath p = test::WrongNeighbourPath();
  p.source_gone = true;
  p.unknown = "why";
  s.paths = {p};
  const std::string text = SnapshotToText(s);
  EXPECT_NE(text.find("\"paths\": ["), std::string::npos) << text;
  auto back = SnapshotFromJson(text);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, s);
  // Without paths, as older files are: read, none.
  Snapshot old = s;
  old.paths.clear();
  EXPECT_EQ(SnapshotToText(old).find("paths"), std::string::npos);
  Observation o;
  AddSnapshot(*back, "snap.json", &o);
  ASSERT_EQ(o.qps.size(), 2u);
  EXPECT_FALSE(o.qps[0].path);
  ASSERT_TRUE(o.qps[1].path);
  EXPECT_EQ(o.qps[1].path->neighbour_mac, "02:00:00:00:00:99");
}

TEST(JudgeLive, NamesAWrongNeighbourEntryWithBothMacs) {
  Observation o = test::FrozenPair(1000, 1000);
  o.qps[1].path = test::WrongNeighbourPath();
  LiveReport r = test::JudgeAll(o);
  ASSERT_EQ(test::LiveProblems(r), std::set<std::string>{"roce-path-broken"}) << test::LiveDump(r);
  const LiveFinding& f = r.findings[0];
  EXPECT_EQ(f.qp, 1u);
  EXPECT_EQ(f.finding.local_value, "10.99.0.2");
  EXPECT_EQ(f.finding.remote_value, "10.99.0.1");
  EXPECT_NE(f.finding.message.find("rxe1 QP 17 (pid 200 client) -> rxe0 QP 17: the neighbour "
                                   "entry for 10.99.0.1 on veth1 is 02:00:00:00:00:99 PERMANENT, "
                                   "but the peer's veth0 is 02:00:0a:63:00:01"),
            std::string::npos)
      << f.finding.message;
  EXPECT_EQ(f.finding.fix, "ip neigh replace 10.99.0.1 lladdr 02:00:0a:63:00:01 dev veth1");
  ASSERT_FALSE(f.evidence.empty());
  EXPECT_NE(f.evidence[0].find("the kernel's path: veth1"), std::string::npos);
}

TEST(JudgeLive, NamesARemovedAddressAndAFailedNeighbour) {
  Observation o = test::FrozenPair(1000, 1000);
  ObservedPath gone = test::WrongNeighbourPath();
  gone.neighbour_mac = gone.peer_mac;
  gone.source_gone = true;
  o.qps[1].path = gone;
  LiveReport r = test::JudgeAll(o);
  ASSERT_EQ(test::LiveProblems(r), std::set<std::string>{"roce-path-broken"}) << test::LiveDump(r);
  EXPECT_NE(r.findings[0].finding.message.find("rxe1 port 1 has no routable RoCE v2 address any "
                                               "more"),
            std::string::npos)
      << r.findings[0].finding.message;

  ObservedPath failed = test::WrongNeighbourPath();
  failed.neighbour_state = "FAILED";
  failed.neighbour_mac.clear();
  o.qps[1].path = failed;
  r = test::JudgeAll(o);
  ASSERT_EQ(test::LiveProblems(r), std::set<std::string>{"roce-path-broken"}) << test::LiveDump(r);
  EXPECT_NE(r.findings[0].finding.message.find("is FAILED: nobody answers ARP"), std::string::npos);

  ObservedPath fine = test::WrongNeighbourPath();
  fine.neighbour_mac = fine.peer_mac;
  o.qps[1].path = fine;
  EXPECT_TRUE(test::LiveProblems(test::JudgeAll(o)).empty());
}

}  // namespace
}  // namespace qpconnect
