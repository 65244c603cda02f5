// SPDX-License-Identifier: MIT
// Describing a side from a device's facts (verbs/describe.h), without a
// device: port checks, GID and P_Key choice, and what reaches the description.
#include "qpconnect/verbs/describe.h"

#include <gtest/gtest.h>

#include <type_traits>

#include "fakes/roce_device.h"
#include "qpconnect/connector.h"
#include "qpconnect/verbs/session.h"

namespace qpconnect::verbs {
namespace {

GidEntry Gid4(uint16_t index, const char* text, GidType type) {
  GidEntry e = fakes::RoceV2Gid(index, text);
  e.type = type;
  e.family = FamilyOfGid(e.gid, type);
  return e;
}

// An rxe-like RoCE device: port 1 ACTIVE, GIDs link-local (0) and IPv4 (1),
// an IPv4 GID also at 300 (a large table), P_Keys 0xffff at 0, 0x8001 at 2.
DeviceInfo RoceDevice() {
  return fakes::RxeDevice(
      "rxe0", 0x1122334455667788ULL,
      {Gid4(0, "fe80::1", GidType::kRoceV2), Gid4(1, "::ffff:10.99.0.1", GidType::kRoceV2),
       Gid4(300, "::ffff:10.99.0.9", GidType::kRoceV2)},
      {{0, 0xffff}, {2, 0x8001}});
}

DescribeOptions Rc() {
  DescribeOptions o;
  o.transport = Transport::kRc;
  o.host = "host-a";
  return o;
}

TEST(DescribeFromDevice, ChoosesTheRoutableRoceV2GidAndDescribesThePort) {
  auto d = DescribeFromDevice(RoceDevice(), Rc());
  ASSERT_TRUE(d) << d.error().ToString();
  const EndpointInfo& e = d->endpoint;
  EXPECT_EQ(e.identity.device, "rxe0");
  EXPECT_EQ(e.identity.host, "host-a");
  ASSERT_TRUE(e.path.sgid);
  EXPECT_EQ(e.path.sgid->index, 1);  // not link-local, and never the one at 300
  EXPECT_TRUE(e.path.use_grh);
  EXPECT_EQ(e.path.hop_limit, 64);
  EXPECT_EQ(e.path.path_mtu, Mtu::k1024);
  EXPECT_FALSE(e.path.path_mtu_forced);
  EXPECT_EQ(e.keys.pkey, 0xffff);
  EXPECT_EQ(e.rd_atomic.device_max_qp_init_rd_atom, 128u);
  EXPECT_TRUE(e.qps.empty());
}

TEST(DescribeFromDevice, ResolvesAPkeyByValueToItsIndex) {
  DescribeOptions o = Rc();
  o.pkey_value = 0x0001;  // the partition, whatever the membership bit
  auto d = DescribeFromDevice(RoceDevice(), o);
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->endpoint.keys.pkey_index, 2);
  EXPECT_EQ(d->endpoint.keys.pkey, 0x8001);
  o.pkey_value = 0x0007;
  auto missing = DescribeFromDevice(RoceDevice(), o);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().attribute, "pkey_index");
  DescribeOptions by_index = Rc();
  by_index.pkey_index = 1;  // an empty slot
  EXPECT_EQ(DescribeFromDevice(RoceDevice(), by_index).error().attribute, "pkey_index");
}

TEST(DescribeFromDevice, RefusesWhatCannotBeUsed) {
  DescribeOptions o = Rc();
  o.gid.index = 300;  // valid entry, but an address vector cannot carry it
  auto wide = DescribeFromDevice(RoceDevice(), o);
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(wide.error().attribute, "sgid_index");

  DescribeOptions port2 = Rc();
  port2.port = 2;
  EXPECT_EQ(DescribeFromDevice(RoceDevice(), port2).error().attribute, "ib-port");

  DeviceInfo down = RoceDevice();
  down.ports[0].facts.active = false;
  down.ports[0].state = "DOWN";
  auto d = DescribeFromDevice(down, Rc());
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().attribute, "port_state");
  EXPECT_NE(d.error().detail.find("DOWN"), std::string::npos);

  DescribeOptions label = Rc();
  label.flow_label = 0x100000;
  EXPECT_EQ(DescribeFromDevice(RoceDevice(), label).error().attribute, "flow_label");
}

TEST(DescribeFromDevice, CarriesTheQosKnobsAndForcedMtu) {
  DescribeOptions o = Rc();
  o.traffic_class = 104;
  o.flow_label = 0x12345;
  o.mtu = Mtu::k512;
  o.sl = 3;
  auto d = DescribeFromDevice(RoceDevice(), o);
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->endpoint.path.traffic_class, 104);
  EXPECT_EQ(d->endpoint.path.flow_label, 0x12345u);
  EXPECT_EQ(d->endpoint.path.path_mtu, Mtu::k512);
  EXPECT_TRUE(d->endpoint.path.path_mtu_forced);
  EXPECT_EQ(d->endpoint.path.sl, 3);
}

TEST(DescribeFromDevice, PrefersAGidWhoseAddressIsConfigured) {
  auto d = DescribeFromDevice(RoceDevice(), Rc(), [](const GidEntry& g) { return g.index == 0; });
  ASSERT_TRUE(d);
  EXPECT_EQ(d->endpoint.path.sgid->index, 0);  // configured beats routable
}

// SessionOptions and AdoptOptions embed DescribeOptions (one type, handed to
// the description as it is): same fields and defaults, but the Q_Key both
// modes default to, the pingpong examples'.
TEST(DescribeOptions, IsEmbeddedInBothModesOptions) {
  static_assert(std::is_base_of_v<DescribeOptions, SessionOptions>);
  static_assert(std::is_base_of_v<DescribeOptions, qpconnect::AdoptOptions>);
  SessionOptions session;
  session.traffic_class = 96;
  const DescribeOptions& from_session = session;
  EXPECT_EQ(from_session.traffic_class, 96);
  EXPECT_EQ(from_session.qkey, kDefaultQkey);
  EXPECT_EQ(static_cast<const DescribeOptions&>(qpconnect::AdoptOptions()).qkey, kDefaultQkey);
  EXPECT_EQ(DescribeOptions().qkey, 0u);
  EXPECT_EQ(from_session.port, 1);
  EXPECT_EQ(from_session.transport, Transport::kRc);
}

TEST(AddQps, NumbersPsnsFromTheFirstAndWrapsAt24Bits) {
  EndpointInfo e;
  AddQps(e, {0x10, 0x11, 0x12}, 0xfffffe,
         {MrDescriptor{0x1000, 7, 64}, std::nullopt, std::nullopt});
  ASSERT_EQ(e.qps.size(), 3u);
  EXPECT_EQ(e.qps[0].psn, 0xfffffeu);
  EXPECT_EQ(e.qps[1].psn, 0xffffffu);
  EXPECT_EQ(e.qps[2].psn, 0u);
  ASSERT_TRUE(e.qps[0].mr);
  EXPECT_EQ(e.qps[0].mr->rkey, 7u);
  EXPECT_FALSE(e.qps[1].mr);
}

}  // namespace
}  // namespace qpconnect::verbs
