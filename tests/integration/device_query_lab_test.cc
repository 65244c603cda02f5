// SPDX-License-Identifier: MIT
// The lean device query a description uses (issue 15: QueryDeviceForPort
// reads one port and one P_Key entry; NetdevAddresses reads the host's
// addresses once), against the full QueryDevice on the lab's real devices.
#include <gtest/gtest.h>

#include "lab_env.h"
#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/device_query.h"
#include "qpconnect/verbs/netdev.h"

namespace qpconnect::verbs {
namespace {

class DeviceQueryLab : public testing::LabFixture {
 protected:
  void SetUp() override {
    LabFixture::SetUp();
    if (!InLab()) return;
    auto ctx = OpenDevice(env_.dev0);
    ASSERT_TRUE(ctx) << ctx.error().ToString();
    ctx_ = std::move(*ctx);
  }
  UniqueContext ctx_;
};

TEST_F(DeviceQueryLab, OnePortAndOnePkeyAgreeWithTheFullQuery) {
  auto full = QueryDevice(*ctx_);
  ASSERT_TRUE(full) << full.error().ToString();
  ASSERT_EQ(full->ports.size(), 1u);
  auto lean = QueryDeviceForPort(*ctx_, 1, PkeyScope{0});
  ASSERT_TRUE(lean) << lean.error().ToString();
  ASSERT_EQ(lean->ports.size(), 1u);
  EXPECT_EQ(lean->name, full->name);
  EXPECT_EQ(lean->node_guid, full->node_guid);
  EXPECT_EQ(lean->limits, full->limits);
  const PortInfo& l = lean->ports[0];
  const PortInfo& f = full->ports[0];
  EXPECT_EQ(l.facts, f.facts);
  EXPECT_EQ(l.gids, f.gids);
  EXPECT_EQ(l.netdev, f.netdev);
  // The full table has index 0 (0xffff on RoCE) among its entries; the lean
  // read holds exactly that one.
  ASSERT_FALSE(f.pkeys.empty());
  ASSERT_EQ(l.pkeys.size(), 1u);
  EXPECT_EQ(l.pkeys[0], f.pkeys[0]);
  EXPECT_EQ(l.pkeys[0].index, 0u);
  // Without a scope the whole table, as QueryDevice reads it.
  auto whole = QueryDeviceForPort(*ctx_, 1, PkeyScope{});
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(whole->ports[0].pkeys, f.pkeys);
}

TEST_F(DeviceQueryLab, AnIndexPastTheTableReadsNothing) {
  auto lean = QueryDeviceForPort(*ctx_, 1, PkeyScope{60000});
  ASSERT_TRUE(lean) << lean.error().ToString();
  EXPECT_TRUE(lean->ports[0].pkeys.empty());
}

TEST_F(DeviceQueryLab, APortTheDeviceLacksIsNotFound) {
  auto lean = QueryDeviceForPort(*ctx_, 2, PkeyScope{0});
  ASSERT_FALSE(lean);
  EXPECT_EQ(lean.error().code, ErrorCode::kNotFound);
  EXPECT_NE(lean.error().detail.find("has no port 2 (it has 1)"), std::string::npos)
      << lean.error().ToString();
}

TEST_F(DeviceQueryLab, OneAddressSnapshotAnswersForEveryGid) {
  auto full = QueryDevice(*ctx_);
  ASSERT_TRUE(full) << full.error().ToString();
  const auto addresses = NetdevAddresses::Snapshot();
  bool some_configured = false;
  for (const GidEntry& g : full->ports[0].gids) {
    // The snapshot and a fresh question agree, GID by GID.
    EXPECT_EQ(addresses.Has(g.netdev, g.gid), NetdevHasAddress(g.netdev, g.gid)) << g.index;
    if (g.index == env_.gid0) some_configured = addresses.Has(g.netdev, g.gid);
  }
  EXPECT_TRUE(some_configured) << "the lab's GID " << env_.gid0 << " has its address configured";
  // An address nobody configured, on the port's netdev.
  Gid stranger{};
  stranger[10] = 0xff;
  stranger[11] = 0xff;
  stranger[12] = 203;
  stranger[13] = 0;
  stranger[14] = 113;
  stranger[15] = 77;
  EXPECT_FALSE(addresses.Has(full->ports[0].netdev, stranger));
}

}  // namespace
}  // namespace qpconnect::verbs
