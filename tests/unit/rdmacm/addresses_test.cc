// SPDX-License-Identifier: MIT
// libqpcm's addresses as hosts have them (issue 39): the spellings of one
// address (sockaddr.h), the device map that takes any of them
// (device_map.h), and rdma_cm's port rules and listener match (ports.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "device_map.h"
#include "ports.h"
#include "sockaddr.h"

namespace qpconnect::rdmacm {
namespace {

// A socket address from text, with a port; IPv4-mapped text stays IPv6 here
// (as a dual-stack socket reports it), unlike ParseAddress.
sockaddr_storage Sock(const std::string& host, uint16_t port = 0, uint32_t scope = 0) {
  sockaddr_storage ss{};
  if (host.find(':') == std::string::npos) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    EXPECT_EQ(inet_pton(AF_INET, host.c_str(), &in->sin_addr), 1) << host;
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    in6->sin6_scope_id = scope;
    EXPECT_EQ(inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr), 1) << host;
  }
  return ss;
}
const sockaddr* Sa(const sockaddr_storage& ss) { return reinterpret_cast<const sockaddr*>(&ss); }

TEST(Unmapped, AnIpv4MappedAddressIsIpv4WithItsPort) {
  const auto mapped = Sock("::ffff:10.77.0.1", 7174);
  const sockaddr_storage u = Unmapped(Sa(mapped));
  ASSERT_EQ(u.ss_family, AF_INET);
  EXPECT_EQ(HostText(Sa(u)), "10.77.0.1");
  EXPECT_EQ(PortOf(Sa(u)), 7174);
  // Others are copied as they are.
  const auto v6 = Sock("fd77::1", 9);
  EXPECT_EQ(Unmapped(Sa(v6)).ss_family, AF_INET6);
  EXPECT_EQ(HostText(Sa(Unmapped(Sa(v6)))), "fd77::1");
}

TEST(SameAddress, MatchesSpellingsAndScopesAsRdmaCmDoes) {
  EXPECT_TRUE(SameAddress(Sa(Sock("::ffff:10.77.0.1", 1)), Sa(Sock("10.77.0.1", 2))));
  EXPECT_FALSE(SameAddress(Sa(Sock("::ffff:10.77.0.1")), Sa(Sock("10.77.0.2"))));
  EXPECT_TRUE(SameAddress(Sa(Sock("fd77:0:0::1")), Sa(Sock("FD77::1"))));
  // A scope id is compared only when both addresses have one.
  EXPECT_TRUE(SameAddress(Sa(Sock("fe80::1", 0, 3)), Sa(Sock("fe80::1"))));
  EXPECT_TRUE(SameAddress(Sa(Sock("fe80::1", 0, 3)), Sa(Sock("fe80::1", 0, 3))));
  EXPECT_FALSE(SameAddress(Sa(Sock("fe80::1", 0, 3)), Sa(Sock("fe80::1", 0, 4))));
  EXPECT_FALSE(SameAddress(Sa(Sock("10.0.0.1")), Sa(Sock("::a00:1"))));  // not mapped
}

// rdma_bind_addr binds these with no device, as rdma_cm (issue 39 item 3:
// libfabric's verbs provider binds "localhost").
TEST(IsLoopback, Ipv4LoopbackNetIpv6LoopbackAndTheirMappedSpelling) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"})
    EXPECT_TRUE(IsLoopback(Sa(Sock(host)))) << host;
  for (const char* host :
       {"10.77.0.1", "0.0.0.0", "::", "fe80::1", "::ffff:10.77.0.1", "128.0.0.1"})
    EXPECT_FALSE(IsLoopback(Sa(Sock(host)))) << host;
}

TEST(ParseAddress, ReadsEverySpellingAndUnmaps) {
  sockaddr_storage a{};
  ASSERT_TRUE(ParseAddress("::ffff:10.77.0.1", a));
  EXPECT_EQ(a.ss_family, AF_INET);
  EXPECT_EQ(HostText(Sa(a)), "10.77.0.1");
  ASSERT_TRUE(ParseAddress("[FD77:0000::0001]", a));
  EXPECT_EQ(HostText(Sa(a)), "fd77::1");
  ASSERT_TRUE(ParseAddress("fe80::1%1", a));  // a scope by number (1: lo)
  EXPECT_EQ(ScopeOf(Sa(a)), 1u);
  ASSERT_TRUE(ParseAddress("fe80::1%lo", a));  // and by name
  EXPECT_EQ(ScopeOf(Sa(a)), 1u);
  EXPECT_EQ(HostText(Sa(a)), "fe80::1%lo");
  EXPECT_FALSE(ParseAddress("rxe0", a));
  EXPECT_FALSE(ParseAddress("", a));
  EXPECT_FALSE(ParseAddress("10.77.0.1:7174", a));
}

TEST(LookUpDeviceMap, TakesAnySpellingOfTheAddress) {
  const char* map = "10.77.0.1=rxe0:1,FD77:0::2=rxe1:1:3,fe80::aff:fe4d:1%1=rxe0";
  // The IPv4 entry names the address a dual-stack listener sees, ::ffff:...
  auto hit = LookUpDeviceMap(Sa(Sock("::ffff:10.77.0.1")), map, nullptr);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->spec, "rxe0:1");
  EXPECT_EQ(hit->source, "QPCM_DEVICES");
  hit = LookUpDeviceMap(Sa(Sock("fd77::2")), map, nullptr);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->spec, "rxe1:1:3");
  // A link-local entry with a scope names the address on that netdev only.
  EXPECT_TRUE(LookUpDeviceMap(Sa(Sock("fe80::aff:fe4d:1", 0, 1)), map, nullptr));
  EXPECT_TRUE(LookUpDeviceMap(Sa(Sock("fe80::aff:fe4d:1")), map, nullptr));
  EXPECT_FALSE(LookUpDeviceMap(Sa(Sock("fe80::aff:fe4d:1", 0, 7)), map, nullptr));
  EXPECT_FALSE(LookUpDeviceMap(Sa(Sock("10.77.0.3")), map, nullptr));
}

TEST(LookUpDeviceMap, ReadsTheConfigFileAfterTheVariableAndNamesUnparsedEntries) {
  char path[] = "/tmp/qpcm_map_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream f(path);
    f << "# the management network\n"
      << "mgmt-a rxe9\n"
      << "::ffff:10.77.0.2 rxe1:1  # mapped spelling\n"
      << "10.77.0.1 rxe1\n";
  }
  std::vector<std::string> unparsed;
  auto hit = LookUpDeviceMap(Sa(Sock("10.77.0.2")), "10.77.0.9=rxe0", path, &unparsed);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->spec, "rxe1:1");
  EXPECT_EQ(hit->source, std::string("QPCM_CONFIG (") + path + ")");
  EXPECT_EQ(unparsed, std::vector<std::string>{"mgmt-a"});
  // The variable comes first.
  hit = LookUpDeviceMap(Sa(Sock("10.77.0.1")), "10.77.0.1=rxe0", path);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->spec, "rxe0");
  std::remove(path);
}

PortUser User(const sockaddr_storage& ss, bool reuse, bool afonly, bool listening = false) {
  return {Sa(ss), reuse, afonly, listening};
}

TEST(PortConflict, ReuseaddrLetsIdsThatDoNotListenShareAPort) {
  const auto a = Sock("10.77.0.1", 7300), b = Sock("10.77.0.1", 7300);
  EXPECT_EQ(PortConflict(User(b, false, true), {User(a, false, true)}, false), EADDRINUSE);
  EXPECT_EQ(PortConflict(User(b, true, true), {User(a, false, true)}, true), EADDRINUSE);
  EXPECT_EQ(PortConflict(User(b, true, true), {User(a, true, true)}, true), 0);
  // A listening id shares with nobody, and an id about to listen neither.
  EXPECT_EQ(PortConflict(User(b, true, true), {User(a, true, true, true)}, true), EADDRINUSE);
  EXPECT_EQ(PortConflict(User(b, true, true), {User(a, true, true)}, false), EADDRINUSE);
  // Other addresses or ports: no conflict.
  const auto c = Sock("10.77.0.2", 7300), d = Sock("10.77.0.1", 7301);
  EXPECT_EQ(PortConflict(User(c, false, true), {User(a, false, true, true)}, false), 0);
  EXPECT_EQ(PortConflict(User(d, false, true), {User(a, false, true, true)}, false), 0);
  // A wildcard overlaps every address of its port.
  const auto any = Sock("0.0.0.0", 7300);
  size_t with = 9;
  EXPECT_EQ(PortConflict(User(any, false, true), {User(c, false, true), User(a, false, true)},
                         false, &with),
            EADDRNOTAVAIL);
  EXPECT_EQ(with, 0u);
}

TEST(PortConflict, AfonlyLetsAnIpv6WildcardShareWithIpv4) {
  const auto v4 = Sock("0.0.0.0", 7300), v6 = Sock("::", 7300);
  EXPECT_EQ(PortConflict(User(v6, false, false), {User(v4, false, true, true)}, false),
            EADDRNOTAVAIL);
  EXPECT_EQ(PortConflict(User(v6, false, true), {User(v4, false, true, true)}, false), 0);
  // A dual-stack wildcard holds the IPv4 addresses of its port too.
  const auto v4a = Sock("10.77.0.1", 7300);
  EXPECT_EQ(PortConflict(User(v4a, false, true), {User(v6, false, false, true)}, false),
            EADDRNOTAVAIL);
  EXPECT_EQ(PortConflict(User(v4a, false, true), {User(v6, false, true, true)}, false), 0);
}

TEST(EffectiveAfOnly, Ipv4AlwaysIpv6AsTheProgramOrTheSystemSays) {
  EXPECT_TRUE(EffectiveAfOnly(AF_INET, std::nullopt));
  EXPECT_TRUE(EffectiveAfOnly(AF_INET6, true));
  EXPECT_FALSE(EffectiveAfOnly(AF_INET6, false));
}

TEST(ListenerMatch, ADualStackWildcardTakesIpv4UnlessAfonly) {
  const auto v6any = Sock("::", 7174), v4any = Sock("0.0.0.0", 7174);
  const auto mapped = Sock("::ffff:10.77.0.1", 7174);  // an IPv4 client, as the socket sees it
  const auto v4 = Sock("10.77.0.1", 7174), v6 = Sock("fd77::1", 7174);
  EXPECT_EQ(ListenerMatch(Sa(v6any), false, Sa(mapped)), 1);
  EXPECT_EQ(ListenerMatch(Sa(v6any), true, Sa(mapped)), 0);
  EXPECT_EQ(ListenerMatch(Sa(v6any), true, Sa(v6)), 1);
  EXPECT_EQ(ListenerMatch(Sa(v4any), true, Sa(mapped)), 1);
  EXPECT_EQ(ListenerMatch(Sa(v4any), true, Sa(v6)), 0);
  // A specific address, in either spelling, wins over a wildcard.
  EXPECT_EQ(ListenerMatch(Sa(v4), true, Sa(mapped)), 2);
  EXPECT_EQ(ListenerMatch(Sa(Sock("::ffff:10.77.0.1", 7174)), false, Sa(v4)), 2);
  EXPECT_EQ(ListenerMatch(Sa(v4), true, Sa(Sock("10.77.0.1", 7175))), 0);  // another port
  // Link-local: the scope matters only when both have one.
  EXPECT_EQ(ListenerMatch(Sa(Sock("fe80::1", 7174, 3)), false, Sa(Sock("fe80::1", 7174, 3))), 2);
  EXPECT_EQ(ListenerMatch(Sa(Sock("fe80::1", 7174, 3)), false, Sa(Sock("fe80::1", 7174, 4))), 0);
}

// rdma_cm: a request on a port some id listens on, that none takes, is
// rejected at once (REJECTED 28; natively an IPv4 client to an AF-only
// IPv6 wildcard), and one on a port nobody listens on waits for a listener.
TEST(WhenNoListenerTakes, RefusesAtOnceOnAPortAnIdListensOn) {
  const auto v6any = Sock("::", 7174), other = Sock("10.77.0.1", 7175);
  const auto v4 = Sock("10.77.0.2", 7174);
  EXPECT_EQ(WhenNoListenerTakes({Sa(v6any)}, Sa(v4)), Unmatched::kRefuseNow);
  EXPECT_EQ(WhenNoListenerTakes({Sa(other), Sa(v6any)}, Sa(v4)), Unmatched::kRefuseNow);
  EXPECT_EQ(WhenNoListenerTakes({Sa(other)}, Sa(v4)), Unmatched::kWaitForListener);
  EXPECT_EQ(WhenNoListenerTakes({}, Sa(v4)), Unmatched::kWaitForListener);
}

TEST(HoldsIpv4ForRefusal, OnlyAnAfonlyIpv6Wildcard) {
  EXPECT_TRUE(HoldsIpv4ForRefusal(Sa(Sock("::", 7174)), true));
  EXPECT_FALSE(HoldsIpv4ForRefusal(Sa(Sock("::", 7174)), false));  // dual stack: takes IPv4
  EXPECT_FALSE(HoldsIpv4ForRefusal(Sa(Sock("fd77::1", 7174)), true));
  EXPECT_FALSE(HoldsIpv4ForRefusal(Sa(Sock("0.0.0.0", 7174)), true));
}

}  // namespace
}  // namespace qpconnect::rdmacm
