// SPDX-License-Identifier: MIT
// rdma_getaddrinfo's chain (rdmacm/src/addrinfo.h): the hints turned into
// getaddrinfo's and each result into an rdma_addrinfo as rdma-core's
// addrinfo.c turns its first, the head always librdmacm's answer, the rest
// getaddrinfo's other results less those that name no RDMA service or
// repeat an entry. Hand-made getaddrinfo lists, and the system's
// getaddrinfo on numeric and passive names (no DNS).
#include "addrinfo.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>
#include <string>
#include <vector>

namespace qpconnect::rdmacm {
namespace {

sockaddr_in V4(const char* text, uint16_t port) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, text, &sin.sin_addr);
  return sin;
}

// A getaddrinfo result list over caller-owned addresses.
struct Results {
  std::vector<sockaddr_in> addrs;
  std::vector<addrinfo> list;
  void Add(const char* text, int socktype, int protocol, int flags = 0) {
    addrs.push_back(V4(text, 7471));
    addrinfo ai{};
    ai.ai_flags = flags;
    ai.ai_family = AF_INET;
    ai.ai_socktype = socktype;
    ai.ai_protocol = protocol;
    ai.ai_addrlen = sizeof(sockaddr_in);
    list.push_back(ai);
  }
  const addrinfo& Head() {
    for (size_t i = 0; i < list.size(); ++i) {
      list[i].ai_addr = reinterpret_cast<sockaddr*>(&addrs[i]);
      list[i].ai_next = i + 1 < list.size() ? &list[i + 1] : nullptr;
    }
    return list[0];
  }
};

std::string Text(const sockaddr* a) {
  if (a == nullptr) return "-";
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, buf, sizeof buf);
  if (a->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, buf, sizeof buf);
  return buf;
}

// "flags qp_type port_space src dst" per entry.
std::vector<std::string> Lines(const rdma_addrinfo* chain) {
  std::vector<std::string> out;
  for (; chain != nullptr; chain = chain->ai_next)
    out.push_back(std::to_string(chain->ai_flags) + " " + std::to_string(chain->ai_qp_type) + " " +
                  std::to_string(chain->ai_port_space) + " " + Text(chain->ai_src_addr) + " " +
                  Text(chain->ai_dst_addr));
  return out;
}

TEST(QpcmAddrinfo, HintsBecomeGetaddrinfosAsLibrdmacmTurnsThem) {
  rdma_addrinfo h{};
  h.ai_flags = RAI_PASSIVE | RAI_NUMERICHOST;
  h.ai_family = AF_INET6;
  h.ai_qp_type = IBV_QPT_RC;
  h.ai_port_space = RDMA_PS_TCP;
  addrinfo ai = GetaddrinfoHints(h);
  EXPECT_EQ(ai.ai_flags, AI_PASSIVE | AI_NUMERICHOST);
  EXPECT_EQ(ai.ai_family, AF_INET6);
  EXPECT_EQ(ai.ai_socktype, SOCK_STREAM);
  EXPECT_EQ(ai.ai_protocol, IPPROTO_TCP);
  h = rdma_addrinfo{};
  h.ai_qp_type = IBV_QPT_UD;
  h.ai_port_space = RDMA_PS_UDP;
  ai = GetaddrinfoHints(h);
  EXPECT_EQ(ai.ai_socktype, SOCK_DGRAM);
  EXPECT_EQ(ai.ai_protocol, IPPROTO_UDP);
  EXPECT_EQ(ai.ai_flags, 0);
  h = rdma_addrinfo{};  // nothing named: every socket type and protocol
  ai = GetaddrinfoHints(h);
  EXPECT_EQ(ai.ai_socktype, 0);
  EXPECT_EQ(ai.ai_protocol, 0);
}

TEST(QpcmAddrinfo, EveryResultIsAnEntryTheHeadLibrdmacmsAnswer) {
  Results r;
  r.Add("10.99.0.1", SOCK_STREAM, IPPROTO_TCP);
  r.Add("10.99.0.1", SOCK_DGRAM, IPPROTO_UDP);
  r.Add("10.99.0.1", SOCK_RAW, 0);  // names no RDMA service: left out
  r.Add("10.99.0.2", SOCK_STREAM, IPPROTO_TCP);
  r.Add("10.99.0.2", SOCK_STREAM, IPPROTO_TCP);  // a repeat: left out
  auto chain = ChainFrom(r.Head(), rdma_addrinfo{});
  ASSERT_TRUE(chain);
  EXPECT_EQ(Lines(chain->get()),
            (std::vector<std::string>{"0 2 262 - 10.99.0.1", "0 4 273 - 10.99.0.1",
                                      "0 2 262 - 10.99.0.2"}));
  EXPECT_EQ((*chain)->ai_family, AF_INET);
  EXPECT_EQ((*chain)->ai_dst_len, sizeof(sockaddr_in));
}

TEST(QpcmAddrinfo, TheHintsQpTypeAndPortSpaceWinAndTheirSourceFillsIn) {
  Results r;
  r.Add("10.99.0.1", SOCK_STREAM, IPPROTO_TCP);
  sockaddr_in src = V4("10.99.0.2", 0);
  rdma_addrinfo h{};
  h.ai_qp_type = IBV_QPT_UC;
  h.ai_port_space = RDMA_PS_IB;
  h.ai_src_addr = reinterpret_cast<sockaddr*>(&src);
  h.ai_src_len = sizeof src;
  auto chain = ChainFrom(r.Head(), h);
  ASSERT_TRUE(chain);
  EXPECT_EQ(Lines(chain->get()), (std::vector<std::string>{"0 3 319 10.99.0.2 10.99.0.1"}));
}

TEST(QpcmAddrinfo, APassiveResultIsASourceAddress) {
  Results r;
  r.Add("0.0.0.0", SOCK_STREAM, IPPROTO_TCP, AI_PASSIVE);
  auto chain = ChainFrom(r.Head(), rdma_addrinfo{});
  ASSERT_TRUE(chain);
  EXPECT_EQ(Lines(chain->get()), (std::vector<std::string>{"1 2 262 0.0.0.0 -"}));
}

TEST(QpcmAddrinfo, TheHeadIsKeptWhateverItIs) {
  Results r;
  r.Add("10.99.0.1", SOCK_RAW, 0);  // librdmacm answers with it: so does the chain
  r.Add("10.99.0.1", SOCK_RAW, 0);
  auto chain = ChainFrom(r.Head(), rdma_addrinfo{});
  ASSERT_TRUE(chain);
  EXPECT_EQ(Lines(chain->get()), (std::vector<std::string>{"0 0 0 - 10.99.0.1"}));
}

TEST(QpcmAddrinfo, NeitherNodeNorServiceIsTheHintsAlone) {
  sockaddr_in dst = V4("10.77.0.1", 7174);
  rdma_addrinfo h{};
  h.ai_flags = RAI_NUMERICHOST;
  h.ai_family = AF_INET;
  h.ai_qp_type = IBV_QPT_RC;
  h.ai_port_space = RDMA_PS_TCP;
  h.ai_dst_addr = reinterpret_cast<sockaddr*>(&dst);
  h.ai_dst_len = sizeof dst;
  auto entry = EntryFromHints(h);
  ASSERT_TRUE(entry);
  EXPECT_EQ(Lines(entry->get()), (std::vector<std::string>{"2 2 262 - 10.77.0.1"}));
  EXPECT_NE((*entry)->ai_dst_addr, h.ai_dst_addr);  // a copy, freed with the chain
}

// The system's getaddrinfo: a passive wildcard with no family gives one
// entry per family (0.0.0.0 and ::), in getaddrinfo's own order.
TEST(QpcmAddrinfo, APassiveWildcardIsEveryFamily) {
  rdma_addrinfo h{};
  h.ai_flags = RAI_PASSIVE;
  h.ai_port_space = RDMA_PS_TCP;
  UniqueAddrinfo chain;
  ASSERT_EQ(ResolveChain(nullptr, "7471", &h, chain), 0);
  addrinfo want = GetaddrinfoHints(h);
  addrinfo* found = nullptr;
  ASSERT_EQ(getaddrinfo(nullptr, "7471", &want, &found), 0);
  std::vector<std::string> expected;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next)
    expected.push_back("1 2 262 " + Text(ai->ai_addr) + " -");
  freeaddrinfo(found);
  EXPECT_EQ(Lines(chain.get()), expected);
  EXPECT_GE(expected.size(), 1u);
}

// (Empty hints rather than none: without hints getaddrinfo applies
// AI_ADDRCONFIG, which depends on the host's addresses.)
TEST(QpcmAddrinfo, EmptyHintsGiveEverySocketTypeWithAnRdmaMeaning) {
  UniqueAddrinfo chain;
  rdma_addrinfo empty{};
  ASSERT_EQ(ResolveChain("127.0.0.1", "7471", &empty, chain), 0);
  // STREAM/TCP first (librdmacm's answer: RC over RDMA_PS_TCP), DGRAM/UDP
  // next; the RAW result names no RDMA service.
  EXPECT_EQ(Lines(chain.get()),
            (std::vector<std::string>{"0 2 262 - 127.0.0.1", "0 4 273 - 127.0.0.1"}));
  UniqueAddrinfo none;
  rdma_addrinfo numeric{};
  numeric.ai_flags = RAI_NUMERICHOST;
  EXPECT_NE(ResolveChain("not-a-number", "7471", &numeric, none), 0);  // EAI_NONAME
  EXPECT_EQ(none, nullptr);
}

}  // namespace
}  // namespace qpconnect::rdmacm
