// SPDX-License-Identifier: MIT
// Multicast on RoCE (rdmacm/src/multicast.h) over a fake platform: the MGID
// rdma_cm derives per group family and RoCE version (the kernel's
// cma_iboe_set_mgid), the MULTICAST_JOIN event's param.ud (cma_make_mc_event:
// GRH to the MGID, QPN 0xffffff, RDMA_UDP_QKEY), which joins take the IP
// group and attach the QP, leave, and the refusals (a TCP id, an id with no
// device, an address with no GID, InfiniBand, a group joined twice).
#include "multicast.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "devices.h"

namespace qpconnect::rdmacm {
namespace {

sockaddr_storage Addr(const char* text) {
  sockaddr_storage s{};
  auto* in = reinterpret_cast<sockaddr_in*>(&s);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&s);
  if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
  } else {
    EXPECT_EQ(inet_pton(AF_INET6, text, &in6->sin6_addr), 1) << text;
    in6->sin6_family = AF_INET6;
  }
  return s;
}
const sockaddr* Sa(const sockaddr_storage& s) { return reinterpret_cast<const sockaddr*>(&s); }

std::string GidText(const ibv_gid& gid) {
  char buf[INET6_ADDRSTRLEN];
  return inet_ntop(AF_INET6, gid.raw, buf, sizeof buf);
}

// The platform's calls, recorded; failures injected by errno.
class FakePlatform : public McPlatform {
 public:
  struct Membership : IpMembership {
    Membership(FakePlatform& p, std::string k) : platform(p), key(std::move(k)) {
      ++platform.live[key];
    }
    ~Membership() override { --platform.live[key]; }
    FakePlatform& platform;
    std::string key;
  };

  Result<std::unique_ptr<IpMembership>> JoinIpGroup(const sockaddr* group,
                                                    const std::string& netdev) override {
    if (join_errno != 0) return Error(ErrorCode::kIo, join_errno, "join");
    std::string key = HostKey(group) + "%" + netdev;
    joins.push_back(key);
    return std::unique_ptr<IpMembership>(new Membership(*this, key));
  }
  Result<void> Attach(ibv_qp* qp, const ibv_gid& mgid) override {
    if (attach_errno != 0) return Error(ErrorCode::kVerbs, attach_errno, "ibv_attach_mcast");
    ++attached[{qp, GidText(mgid)}];
    return {};
  }
  Result<void> Detach(ibv_qp* qp, const ibv_gid& mgid) override {
    ++detaches;
    --attached[{qp, GidText(mgid)}];
    return {};
  }
  static std::string HostKey(const sockaddr* a) {
    char buf[INET6_ADDRSTRLEN];
    const void* raw =
        a->sa_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(a)->sin_addr)
            : &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
    return inet_ntop(a->sa_family, raw, buf, sizeof buf);
  }
  int Live() const {
    int n = 0;
    for (const auto& [k, v] : live) n += v;
    return n;
  }
  int Attached() const {
    int n = 0;
    for (const auto& [k, v] : attached) n += v;
    return n;
  }

  int join_errno = 0;
  int attach_errno = 0;
  std::vector<std::string> joins;
  std::map<std::string, int> live;  // memberships held per group%netdev
  std::map<std::pair<ibv_qp*, std::string>, int> attached;
  int detaches = 0;
};

JoinSite V2Site() {
  JoinSite site;
  site.port = 1;
  site.sgid_index = 1;
  site.gid_type = GidType::kRoceV2;
  site.netdev = "veth0";
  return site;
}

// A pointer the fake never follows.
ibv_qp* FakeQp() {
  static int storage;
  return reinterpret_cast<ibv_qp*>(&storage);
}

TEST(QpcmMulticast, AnIpv4GroupIsItsMappedAddressOnRoceV2AndFf0eOnV1) {
  auto g = Addr("239.1.1.1");
  auto v2 = MulticastGid(Sa(g), GidType::kRoceV2);
  ASSERT_TRUE(v2);
  EXPECT_EQ(GidText(*v2), "::ffff:239.1.1.1");
  auto v1 = MulticastGid(Sa(g), GidType::kRoceV1);
  ASSERT_TRUE(v1);
  EXPECT_EQ(GidText(*v1), "ff0e::ffff:ef01:101");
}

TEST(QpcmMulticast, AnIpv6GroupIsItsOwnMgidOnEitherVersion) {
  auto g = Addr("ff15::1:2");
  for (GidType type : {GidType::kRoceV1, GidType::kRoceV2}) {
    auto mgid = MulticastGid(Sa(g), type);
    ASSERT_TRUE(mgid);
    EXPECT_EQ(GidText(*mgid), "ff15::1:2");
  }
  auto mapped = MulticastGid(Sa(Addr("::ffff:239.1.1.1")), GidType::kRoceV2);
  ASSERT_TRUE(mapped);  // an IPv4-mapped group is the IPv4 group
  EXPECT_EQ(GidText(*mapped), "::ffff:239.1.1.1");
}

TEST(QpcmMulticast, AGroupThatIsNoMulticastAddressIsEinval) {
  for (const char* text : {"10.99.0.1", "0.0.0.0", "fe80::1", "::"}) {
    auto mgid = MulticastGid(Sa(Addr(text)), GidType::kRoceV2);
    ASSERT_FALSE(mgid) << text;
    EXPECT_EQ(mgid.error().sys_errno, EINVAL);
  }
  sockaddr unix_addr{};
  unix_addr.sa_family = AF_UNIX;
  EXPECT_FALSE(MulticastGid(&unix_addr, GidType::kRoceV2));
  EXPECT_FALSE(MulticastGid(nullptr, GidType::kRoceV2));
}

TEST(QpcmMulticast, TheJoinEventCarriesAGrhToTheMgidQpnFfffffAndTheUdpQkey) {
  JoinSite site = V2Site();
  site.port = 2;
  site.sgid_index = 3;
  site.traffic_class = 96;
  auto mgid = MulticastGid(Sa(Addr("239.1.1.1")), GidType::kRoceV2);
  ASSERT_TRUE(mgid);
  JoinParams p = JoinEventParams(site, *mgid);
  EXPECT_EQ(p.qp_num, 0xffffffu);
  EXPECT_EQ(p.qkey, 0x01234567u);  // RDMA_UDP_QKEY
  EXPECT_EQ(p.ah.is_global, 1);
  EXPECT_EQ(p.ah.dlid, 0);
  EXPECT_EQ(p.ah.sl, 0);
  EXPECT_EQ(p.ah.port_num, 2);
  EXPECT_EQ(GidText(p.ah.grh.dgid), "::ffff:239.1.1.1");
  EXPECT_EQ(p.ah.grh.sgid_index, 3);
  EXPECT_EQ(p.ah.grh.hop_limit, 64);  // RoCE v2: the IP TTL
  EXPECT_EQ(p.ah.grh.traffic_class, 96);
  site.gid_type = GidType::kRoceV1;
  EXPECT_EQ(JoinEventParams(site, *mgid).ah.grh.hop_limit, 1);
}

EndpointInfo RocePort() {
  EndpointInfo port;
  port.port.link_layer = LinkLayer::kEthernet;
  port.port.port_num = 1;
  auto entry = [](uint16_t index, const char* text, GidType type) {
    GidEntry e;
    e.index = index;
    auto a = Addr(text);
    ibv_gid gid{};
    EXPECT_TRUE(a.ss_family == AF_INET6);
    std::memcpy(gid.raw, &reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr, 16);
    std::memcpy(e.gid.data(), gid.raw, 16);
    e.type = type;
    e.netdev = "veth0";
    return e;
  };
  port.gid_table = {entry(0, "fe80::ff:fe63:1", GidType::kRoceV2),
                    entry(1, "::ffff:10.99.0.1", GidType::kRoceV1),
                    entry(2, "::ffff:10.99.0.1", GidType::kRoceV2)};
  port.path.sgid = port.gid_table[0];
  return port;
}

TEST(QpcmMulticast, TheSiteIsTheGidOfTheIdsAddressRoceV2First) {
  auto src = Addr("10.99.0.1");
  auto site = PickJoinSite(RocePort(), Sa(src), uint8_t{32});
  ASSERT_TRUE(site);
  EXPECT_EQ(site->sgid_index, 2);
  EXPECT_EQ(site->gid_type, GidType::kRoceV2);
  EXPECT_EQ(site->netdev, "veth0");
  EXPECT_EQ(site->traffic_class, 32);
}

TEST(QpcmMulticast, AnAddressWithNoGidTakesTheDescribedGidOrIsEnodev) {
  auto mapped = Addr("10.88.0.1");  // mapped by QPCM_DEVICES: no GID of its own
  auto site = PickJoinSite(RocePort(), Sa(mapped), std::nullopt);
  ASSERT_TRUE(site);
  EXPECT_EQ(site->sgid_index, 0);
  EndpointInfo bare = RocePort();
  bare.path.sgid.reset();
  auto none = PickJoinSite(bare, Sa(mapped), std::nullopt);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().sys_errno, ENODEV);
}

TEST(QpcmMulticast, InfinibandIsEnosys) {
  EndpointInfo ib = RocePort();
  ib.port.link_layer = LinkLayer::kInfiniBand;
  auto src = Addr("10.99.0.1");
  auto site = PickJoinSite(ib, Sa(src), std::nullopt);
  ASSERT_FALSE(site);
  EXPECT_EQ(site.error().sys_errno, ENOSYS);
  FakePlatform platform;
  McGroups groups(platform);
  JoinSite ib_site = V2Site();
  ib_site.link_layer = LinkLayer::kInfiniBand;
  auto joined = groups.Join(Sa(Addr("239.1.1.1")), false, ib_site, FakeQp());
  ASSERT_FALSE(joined);
  EXPECT_EQ(joined.error().sys_errno, ENOSYS);
  EXPECT_TRUE(platform.joins.empty());
}

TEST(QpcmMulticast, OnlyABoundOrResolvedUdIdWithADeviceJoins) {
  LibraryLock lock;
  Id id;
  Device device;
  id.pub.ps = RDMA_PS_UDP;
  id.pub.qp_type = IBV_QPT_UD;
  id.device = &device;
  id.state = IdState::kAddrResolved;
  EXPECT_TRUE(CheckJoinable(id));
  id.state = IdState::kBound;
  EXPECT_TRUE(CheckJoinable(id));
  id.state = IdState::kRouteResolved;  // as rdma_cm: EINVAL
  EXPECT_EQ(CheckJoinable(id).error().sys_errno, EINVAL);
  id.state = IdState::kBound;
  id.device = nullptr;  // bound to the wildcard, or to no device's address
  EXPECT_EQ(CheckJoinable(id).error().sys_errno, EINVAL);
  id.device = &device;
  id.pub.ps = RDMA_PS_TCP;
  id.pub.qp_type = IBV_QPT_RC;
  EXPECT_EQ(CheckJoinable(id).error().sys_errno, EINVAL);
}

TEST(QpcmMulticast, AFullMemberJoinsTheIpGroupOnTheNetdevAndAttachesTheQp) {
  FakePlatform platform;
  McGroups groups(platform);
  auto joined = groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), FakeQp());
  ASSERT_TRUE(joined);
  EXPECT_EQ(GidText(joined->ah.grh.dgid), "::ffff:239.1.1.1");
  EXPECT_EQ(platform.joins, std::vector<std::string>{"239.1.1.1%veth0"});
  EXPECT_EQ(platform.Live(), 1);
  EXPECT_EQ((platform.attached[{FakeQp(), "::ffff:239.1.1.1"}]), 1);
  EXPECT_EQ(groups.size(), 1u);
}

TEST(QpcmMulticast, AnIpv6GroupIsJoinedWithMld) {
  FakePlatform platform;
  McGroups groups(platform);
  ASSERT_TRUE(groups.Join(Sa(Addr("ff15::1")), false, V2Site(), FakeQp()));
  EXPECT_EQ(platform.joins, std::vector<std::string>{"ff15::1%veth0"});
  EXPECT_EQ((platform.attached[{FakeQp(), "ff15::1"}]), 1);
}

TEST(QpcmMulticast, SendOnlyJoinsNothingAndRoceV1NoIpGroup) {
  FakePlatform platform;
  McGroups groups(platform);
  ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.1")), true, V2Site(), FakeQp()));
  EXPECT_TRUE(platform.joins.empty());
  EXPECT_EQ(platform.Attached(), 0);
  JoinSite v1 = V2Site();
  v1.gid_type = GidType::kRoceV1;
  ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.2")), false, v1, FakeQp()));
  EXPECT_TRUE(platform.joins.empty());  // no IP header on RoCE v1
  EXPECT_EQ((platform.attached[{FakeQp(), "ff0e::ffff:ef01:102"}]), 1);
}

TEST(QpcmMulticast, WithoutAQpTheIdJoinsAndAttachesNothing) {
  FakePlatform platform;
  McGroups groups(platform);
  ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), nullptr));
  EXPECT_EQ(platform.Live(), 1);
  EXPECT_EQ(platform.Attached(), 0);
}

TEST(QpcmMulticast, AGroupJoinedTwiceIsEaddrinuseAndTouchesNothing) {
  FakePlatform platform;
  McGroups groups(platform);
  ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), FakeQp()));
  auto again = groups.Join(Sa(Addr("::ffff:239.1.1.1")), false, V2Site(), FakeQp());
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().sys_errno, EADDRINUSE);
  EXPECT_EQ(platform.joins.size(), 1u);
  EXPECT_EQ(platform.Attached(), 1);
  EXPECT_EQ(groups.size(), 1u);
}

TEST(QpcmMulticast, LeaveDetachesTheQpAndDropsTheIpGroup) {
  FakePlatform platform;
  McGroups groups(platform);
  ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), FakeQp()));
  ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.2")), false, V2Site(), FakeQp()));
  ASSERT_TRUE(groups.Leave(Sa(Addr("239.1.1.1"))));
  EXPECT_EQ((platform.attached[{FakeQp(), "::ffff:239.1.1.1"}]), 0);
  EXPECT_EQ(platform.live["239.1.1.1%veth0"], 0);
  EXPECT_EQ(platform.live["239.1.1.2%veth0"], 1);
  auto unknown = groups.Leave(Sa(Addr("239.1.1.1")));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().sys_errno, EADDRNOTAVAIL);
  EXPECT_EQ(groups.Leave(nullptr).error().sys_errno, EINVAL);
}

TEST(QpcmMulticast, DestroyingTheGroupsLeavesEveryGroup) {
  FakePlatform platform;
  {
    McGroups groups(platform);
    ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), FakeQp()));
    ASSERT_TRUE(groups.Join(Sa(Addr("ff15::1")), false, V2Site(), FakeQp()));
  }
  EXPECT_EQ(platform.Live(), 0);
  EXPECT_EQ(platform.Attached(), 0);
  EXPECT_EQ(platform.detaches, 2);
}

TEST(QpcmMulticast, ADestroyedQpIsDetachedOnceAndTheMembershipStays) {
  FakePlatform platform;
  McGroups groups(platform);
  ASSERT_TRUE(groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), FakeQp()));
  groups.DetachQp();
  EXPECT_EQ(platform.Attached(), 0);
  EXPECT_EQ(platform.Live(), 1);
  ASSERT_TRUE(groups.Leave(Sa(Addr("239.1.1.1"))));
  EXPECT_EQ(platform.detaches, 1);
  EXPECT_EQ(platform.Live(), 0);
}

TEST(QpcmMulticast, AFailedAttachOrIpJoinKeepsNothing) {
  FakePlatform platform;
  McGroups groups(platform);
  platform.attach_errno = ENOMEM;
  auto failed = groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), FakeQp());
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kVerbs);
  EXPECT_EQ(failed.error().sys_errno, ENOMEM);
  EXPECT_EQ(platform.Live(), 0);  // the IP group it took is dropped again
  EXPECT_EQ(groups.size(), 0u);
  platform.attach_errno = 0;
  platform.join_errno = ENODEV;
  auto no_netdev = groups.Join(Sa(Addr("239.1.1.1")), false, V2Site(), FakeQp());
  ASSERT_FALSE(no_netdev);
  EXPECT_EQ(no_netdev.error().sys_errno, ENODEV);
  EXPECT_EQ(platform.Attached(), 0);
  EXPECT_EQ(groups.size(), 0u);
}

}  // namespace
}  // namespace qpconnect::rdmacm
