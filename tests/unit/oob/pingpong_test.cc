// SPDX-License-Identifier: MIT
// The pingpong dialect (qpconnect/oob/pingpong.h): the record codec with the
// example of /work/shared/docs/peers.md, hostile records, the conversion to an
// EndpointInfo the validator accepts, and the step sequence over loopback TCP
// against a tiny fake peer that speaks the stock order.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "qpconnect/oob/pingpong.h"
#include "qpconnect/plan.h"
#include "qpconnect/validate.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Clock = PingpongClock;

constexpr char kExample[] = "001a:0004b2:abcdef:fe800000000000000202c9fffe010203";

std::string ExampleBytes() { return std::string(kExample, sizeof kExample); }  // with NUL

PingpongRecord ExampleRecord() {
  PingpongRecord r;
  r.lid = 0x1a;
  r.qpn = 0x4b2;
  r.psn = 0xabcdef;
  r.gid = *GidFromString("fe80::202:c9ff:fe01:203");
  return r;
}

TEST(PingpongRecord, EncodesThePeersMdExample) {
  std::string wire = EncodePingpongRecord(ExampleRecord());
  ASSERT_EQ(wire.size(), kPingpongRecordBytes);
  EXPECT_EQ(wire, ExampleBytes());
  EXPECT_EQ(wire.back(), '\0');
}

TEST(PingpongRecord, DecodesThePeersMdExample) {
  auto r = DecodePingpongRecord(ExampleBytes());
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(*r, ExampleRecord());
}

TEST(PingpongRecord, RoundTripsExtremes) {
  PingpongRecord r;
  r.lid = 0xbfff;
  r.qpn = 0xffffff;
  r.psn = 0;
  r.gid = *GidFromString("::ffff:10.99.0.1");
  auto back = DecodePingpongRecord(EncodePingpongRecord(r));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, r);
}

TEST(PingpongRecord, AcceptsUpperCaseHex) {
  std::string s = ExampleBytes();
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto r = DecodePingpongRecord(s);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(*r, ExampleRecord());
}

// Each hostile record is refused with kProtocol naming the field at fault.
struct Hostile {
  const char* name;
  std::string bytes;
  const char* attribute;
};

std::string With(size_t at, char c) {
  std::string s = ExampleBytes();
  s[at] = c;
  return s;
}

TEST(PingpongRecord, RefusesHostileRecordsNamingTheField) {
  std::string s = ExampleBytes();
  const Hostile cases[] = {
      {"empty", "", "length"},
      {"no NUL (51 bytes)", s.substr(0, 51), "length"},
      {"one byte too many", s + "x", "length"},
      {"perftest-size record", std::string(59, '0'), "length"},
      {"lid not hex", With(2, 'g'), "lid"},
      {"qpn not hex", With(6, ' '), "qpn"},
      {"psn not hex", With(13, '-'), "psn"},
      {"gid not hex", With(40, 'z'), "gid"},
      {"gid with NUL inside", With(30, '\0'), "gid"},
      {"separator moved", With(4, '0'), "separator"},
      {"wider lid", "0001a:0004b2:abcdef:fe800000000000000202c9fffe01020" + std::string(1, '\0'),
       "separator"},
      {"no terminator", With(51, '3'), "terminator"},
      {"qpn 0", "001a:000000:abcdef:fe800000000000000202c9fffe010203" + std::string(1, '\0'),
       "qpn"},
      {"qpn 1", "001a:000001:abcdef:fe800000000000000202c9fffe010203" + std::string(1, '\0'),
       "qpn"},
      {"multicast lid",
       "c001:0004b2:abcdef:fe800000000000000202c9fffe010203" + std::string(1, '\0'), "lid"},
      {"permissive lid",
       "ffff:0004b2:abcdef:fe800000000000000202c9fffe010203" + std::string(1, '\0'), "lid"},
  };
  for (const auto& c : cases) {
    auto r = DecodePingpongRecord(c.bytes);
    ASSERT_FALSE(r) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::kProtocol) << c.name;
    EXPECT_EQ(r.error().attribute, c.attribute) << c.name << ": " << r.error().ToString();
    EXPECT_NE(r.error().ToString().find("pingpong"), std::string::npos) << c.name;
  }
}

TEST(PingpongRecord, BadFieldIsNamedInTheText) {
  auto r = DecodePingpongRecord(With(13, 'x'));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().ToString().find("psn: 'x' at byte 13 is not a hex digit"), std::string::npos)
      << r.error().ToString();
}

TEST(PingpongRecord, FromEndpointTakesTheFirstQpAndTheGidInUse) {
  EndpointInfo e;
  e.port.lid = 0x1a;
  e.qps = {{0x4b2, 0xabcdef, std::nullopt}, {0x4b3, 1, std::nullopt}};
  GidEntry g;
  g.index = 3;
  g.gid = *GidFromString("fe80::202:c9ff:fe01:203");
  e.path.sgid = g;
  EXPECT_EQ(RecordFromEndpoint(e), ExampleRecord());
  e.path.sgid.reset();
  EXPECT_TRUE(IsZeroGid(RecordFromEndpoint(e).gid));
}

TEST(PingpongRecord, GrhOnlyWhenTheInterfaceIdIsNonZero) {
  EXPECT_TRUE(PingpongUsesGrh(*GidFromString("fe80::202:c9ff:fe01:203")));
  EXPECT_TRUE(PingpongUsesGrh(*GidFromString("::ffff:10.99.0.1")));
  EXPECT_FALSE(PingpongUsesGrh(Gid{}));
  EXPECT_FALSE(PingpongUsesGrh(*GidFromString("fe80::")));
}

// A RoCE v2 local side as Session::Open describes rxe0.
EndpointInfo RoceLocal(Transport t) {
  EndpointInfo e;
  e.transport = t;
  e.identity = {"lab", "rxe0", 0x020000fffe0a6301ULL};
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.active = true;
  e.port.active_mtu = Mtu::k1024;
  e.port.max_mtu = Mtu::k4096;
  e.path.path_mtu = Mtu::k1024;
  e.path.path_mtu_forced = true;
  GidEntry g;
  g.index = 1;
  g.gid = *GidFromString("::ffff:10.99.0.1");
  g.type = GidType::kRoceV2;
  g.family = GidFamily::kIpv4;
  e.path.sgid = g;
  e.path.use_grh = true;
  e.path.hop_limit = t == Transport::kUd ? 64 : 1;
  e.gid_table = {g};
  if (t == Transport::kUd) e.keys.qkey = 0x11111111;
  e.qps = {{0x11, 0x123456, std::nullopt}};
  return e;
}

TEST(PingpongEndpoint, StockRocePeerValidatesWithoutErrors) {
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    EndpointInfo local = RoceLocal(t);
    PingpongRecord peer;
    peer.lid = 0;
    peer.qpn = 0x12;
    peer.psn = 0x654321;
    peer.gid = *GidFromString("::ffff:10.99.0.2");
    EndpointInfo remote =
        EndpointFromRecord(peer, t, local.path.sgid->gid, Mtu::k1024, "10.99.0.2");
    EXPECT_TRUE(remote.path.use_grh);
    EXPECT_EQ(remote.port.link_layer, LinkLayer::kUnspecified);
    EXPECT_EQ(remote.qps.at(0).qpn, 0x12u);
    EXPECT_EQ(remote.qps.at(0).psn, 0x654321u);
    local.path.path_mtu = Mtu::k1024;  // qp-connect --wire pingpong's default -m
    local.path.path_mtu_forced = true;
    PlanOptions po;
    po.message_size = t == Transport::kUd ? 1024 : 4096;
    ConnectionPlan plan = PlanConnection(local, remote, po);
    auto findings = Validate({&local, &remote, plan, std::nullopt});
    for (const auto& f : findings) {
      EXPECT_NE(f.severity, Severity::kError) << TransportName(t) << ": " << FindingToString(f);
      EXPECT_NE(f.id, "grh-required") << FindingToString(f);
    }
    EXPECT_GT(std::count_if(findings.begin(), findings.end(),
                            [](const Finding& f) { return f.unchecked; }),
              0)
        << "the dialect carries no P_Key etc.: something must be reported unchecked";
  }
}

// ---- the steps over loopback TCP ----

int ConnectLoopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string ReadN(int fd, size_t n) {
  std::string s;
  char buf[128];
  while (s.size() < n) {
    ssize_t r = ::read(fd, buf, std::min(sizeof buf, n - s.size()));
    if (r <= 0) break;
    s.append(buf, static_cast<size_t>(r));
  }
  return s;
}

void WriteS(int fd, const std::string& s) {
  ASSERT_EQ(::write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size()));
}

std::unique_ptr<PingpongServer> LoopbackServer() {
  PingpongServerOptions o;
  o.bind_address = "127.0.0.1";
  o.port = 0;
  auto s = PingpongServer::Create(o);
  EXPECT_TRUE(s) << s.error().ToString();
  return std::move(*s);
}

TEST(PingpongSteps, ServerFollowsTheStockClientOrder) {
  auto server = LoopbackServer();
  PingpongRecord ours = ExampleRecord();
  ours.qpn = 0x777;
  // The fake stock client: write record, read 52, write "done", close.
  auto client = std::async(std::launch::async, [port = server->port()] {
    int fd = ConnectLoopback(port);
    if (fd < 0) return std::string("connect failed");
    WriteS(fd, ExampleBytes());
    std::string got = ReadN(fd, kPingpongRecordBytes);
    WriteS(fd, std::string("done", 5));
    ::close(fd);
    return got;
  });
  auto deadline = Clock::now() + 5s;
  auto peer = server->AcceptAndReadPeer(deadline);
  ASSERT_TRUE(peer) << peer.error().ToString();
  EXPECT_EQ(*peer, ExampleRecord());
  EXPECT_NE(server->peer_address().find("127.0.0.1"), std::string::npos);
  ASSERT_TRUE(server->SendOwn(ours, deadline));
  auto done = server->ReadDone(deadline);
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_EQ(client.get(), EncodePingpongRecord(ours));
}

TEST(PingpongSteps, ClientFollowsTheStockServerOrder) {
  // The fake stock server: one read of 52, (RTR/RTS), write record, read 5.
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(lfd, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  uint16_t port = ntohs(a.sin_port);
  auto server = std::async(std::launch::async, [lfd] {
    int fd = ::accept(lfd, nullptr, nullptr);
    std::string got = ReadN(fd, kPingpongRecordBytes);
    WriteS(fd, ExampleBytes());
    std::string done = ReadN(fd, kPingpongDoneBytes);
    ::close(fd);
    return got + "|" + done;
  });
  PingpongClientOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  auto c = PingpongClient::Create(o);
  ASSERT_TRUE(c);
  auto deadline = Clock::now() + 5s;
  ASSERT_TRUE((*c)->Connect(deadline));
  PingpongRecord ours = ExampleRecord();
  ours.psn = 0x1;
  ASSERT_TRUE((*c)->SendOwn(ours, deadline));
  auto peer = (*c)->ReadPeer(deadline);
  ASSERT_TRUE(peer) << peer.error().ToString();
  EXPECT_EQ(*peer, ExampleRecord());
  ASSERT_TRUE((*c)->SendDone(deadline));
  EXPECT_EQ(server.get(), EncodePingpongRecord(ours) + "|" + std::string("done", 5));
  ::close(lfd);
}

TEST(PingpongSteps, ServerTimesOutWithoutAClient) {
  auto server = LoopbackServer();
  auto t0 = Clock::now();
  auto peer = server->AcceptAndReadPeer(Clock::now() + 200ms);
  ASSERT_FALSE(peer);
  EXPECT_EQ(peer.error().code, ErrorCode::kTimeout);
  EXPECT_LT(Clock::now() - t0, 3s);
}

TEST(PingpongSteps, ServerTimesOutOnAShortRecordAndSaysSo) {
  auto server = LoopbackServer();
  int fd = ConnectLoopback(server->port());
  ASSERT_GE(fd, 0);
  WriteS(fd, std::string(16, 'x'));  // e.g. perftest's version string
  auto peer = server->AcceptAndReadPeer(Clock::now() + 300ms);
  ASSERT_FALSE(peer);
  EXPECT_EQ(peer.error().code, ErrorCode::kTimeout);
  EXPECT_NE(peer.error().detail.find("16 of 52"), std::string::npos) << peer.error().ToString();
  EXPECT_NE(peer.error().detail.find("perftest"), std::string::npos);
  ::close(fd);
}

TEST(PingpongSteps, ServerRefusesGarbageNamingTheField) {
  auto server = LoopbackServer();
  int fd = ConnectLoopback(server->port());
  ASSERT_GE(fd, 0);
  WriteS(fd, With(8, 'q'));
  auto peer = server->AcceptAndReadPeer(Clock::now() + 2s);
  ASSERT_FALSE(peer);
  EXPECT_EQ(peer.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(peer.error().attribute, "qpn");
  ::close(fd);
}

TEST(PingpongSteps, ServerNoticesAnEarlyClose) {
  auto server = LoopbackServer();
  int fd = ConnectLoopback(server->port());
  ASSERT_GE(fd, 0);
  WriteS(fd, ExampleBytes());
  auto peer = server->AcceptAndReadPeer(Clock::now() + 2s);
  ASSERT_TRUE(peer);
  ::close(fd);
  static_cast<void>(server->SendOwn(ExampleRecord(), Clock::now() + 2s));  // may fail: EPIPE
  auto done = server->ReadDone(Clock::now() + 2s);
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().code, ErrorCode::kTimeout) << done.error().ToString();
}

TEST(PingpongSteps, ServerRefusesAWrongDone) {
  auto server = LoopbackServer();
  int fd = ConnectLoopback(server->port());
  ASSERT_GE(fd, 0);
  WriteS(fd, ExampleBytes());
  ASSERT_TRUE(server->AcceptAndReadPeer(Clock::now() + 2s));
  ASSERT_TRUE(server->SendOwn(ExampleRecord(), Clock::now() + 2s));
  WriteS(fd, "DONE!");
  auto done = server->ReadDone(Clock::now() + 2s);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, ErrorCode::kProtocol);
  ::close(fd);
}

TEST(PingpongSteps, ClientGivesUpOnARefusingServerAtTheDeadline) {
  PingpongClientOptions o;
  o.host = "127.0.0.1";
  o.port = 1;  // nothing listens there
  o.retry_interval = 50ms;
  auto c = PingpongClient::Create(o);
  ASSERT_TRUE(c);
  auto t0 = Clock::now();
  auto r = (*c)->Connect(Clock::now() + 300ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().sys_errno, ECONNREFUSED) << r.error().ToString();
  EXPECT_LT(Clock::now() - t0, 3s);
}

TEST(PingpongSteps, ClientTimesOutOnASilentServer) {
  auto server = LoopbackServer();  // listens but never answers
  PingpongClientOptions o;
  o.host = "127.0.0.1";
  o.port = server->port();
  auto c = PingpongClient::Create(o);
  ASSERT_TRUE(c);
  auto deadline = Clock::now() + 300ms;
  ASSERT_TRUE((*c)->Connect(deadline));
  ASSERT_TRUE((*c)->SendOwn(ExampleRecord(), deadline));
  auto peer = (*c)->ReadPeer(deadline);
  ASSERT_FALSE(peer);
  EXPECT_EQ(peer.error().code, ErrorCode::kTimeout);
}

// The client resolves as the tcp exchanger does (exchange/asio_deadline.h):
// a name that does not resolve is kNotFound naming it, and a slow resolver
// cannot hold the call past its deadline.
TEST(PingpongSteps, ClientNamesAnUnresolvableHostWithinTheDeadline) {
  PingpongClientOptions o;
  o.host = "no-such-host.invalid";
  auto c = PingpongClient::Create(o);
  ASSERT_TRUE(c);
  const auto t0 = Clock::now();
  auto r = (*c)->Connect(Clock::now() + 2s);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().code == ErrorCode::kNotFound || r.error().code == ErrorCode::kTimeout)
      << r.error().ToString();
  EXPECT_NE(r.error().operation.find("no-such-host.invalid"), std::string::npos)
      << r.error().ToString();
  EXPECT_LT(Clock::now() - t0, 3s);
}

TEST(PingpongSteps, OursTalkToOurs) {
  auto server = LoopbackServer();
  PingpongClientOptions o;
  o.host = "localhost";
  o.port = server->port();
  auto c = PingpongClient::Create(o);
  ASSERT_TRUE(c);
  PingpongRecord srv = ExampleRecord(), cli = ExampleRecord();
  srv.qpn = 0x100;
  cli.qpn = 0x200;
  auto deadline = Clock::now() + 5s;
  auto client = std::async(std::launch::async, [&] {
    if (!(*c)->Connect(deadline) || !(*c)->SendOwn(cli, deadline)) return PingpongRecord{};
    auto p = (*c)->ReadPeer(deadline);
    if (!p || !(*c)->SendDone(deadline)) return PingpongRecord{};
    return *p;
  });
  auto peer = server->AcceptAndReadPeer(deadline);
  ASSERT_TRUE(peer) << peer.error().ToString();
  EXPECT_EQ(*peer, cli);
  ASSERT_TRUE(server->SendOwn(srv, deadline));
  ASSERT_TRUE(server->ReadDone(deadline));
  EXPECT_EQ(client.get(), srv);
}

}  // namespace
}  // namespace qpconnect::oob
