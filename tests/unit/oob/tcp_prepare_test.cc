// SPDX-License-Identifier: MIT
// TcpExchanger::Prepare() (issue 15): a client connects and greets the
// server before its description is ready, so that the connect and the hellos
// overlap the caller's device open; Exchange() then only swaps descriptions.
// Loopback, listeners on port 0.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "exchange_samples.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/tcp.h"
#include "tcp_loopback.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Both sides prepared (keyed or not), then a description long after: the
// descriptions and a barrier pass, and the frames are those of an exchange
// without Prepare() (hello + description, with a key + confirm).
void ExpectPreparedExchange(std::optional<Psk> key) {
  auto server = LoopbackServer(key);
  auto client = LoopbackClient(server->port(), key);
  auto fs = std::async(std::launch::async, [&]() -> Result<EndpointInfo> {
    QPC_TRY(server->Prepare(5s));
    return server->Exchange(MakeEndpoint("s", 2), 5s);
  });
  ASSERT_TRUE(client->Prepare(5s));
  const ExchangeStats greeted = client->stats();
  EXPECT_EQ(greeted.frames_sent, key ? 2u : 1u);  // hello (+ confirm): no description yet
  EXPECT_EQ(greeted.frames_received, key ? 2u : 1u);
  std::this_thread::sleep_for(50ms);  // "the device opens"
  auto rc = client->Exchange(MakeEndpoint("c", 2), 5s);
  auto rs = fs.get();
  ASSERT_TRUE(rc) << rc.error().ToString();
  ASSERT_TRUE(rs) << rs.error().ToString();
  EXPECT_EQ(*rc, MakeEndpoint("s", 2));
  EXPECT_EQ(*rs, MakeEndpoint("c", 2));
  EXPECT_EQ(client->stats().frames_sent, greeted.frames_sent + 1);
  EXPECT_EQ(client->stats().frames_received, greeted.frames_received + 1);
  auto bs = std::async(std::launch::async, [&] { return server->Barrier("rts", 5s); });
  EXPECT_TRUE(client->Barrier("rts", 5s));
  EXPECT_TRUE(bs.get());
}

TEST(TcpPrepare, GreetsFirstThenSwapsDescriptions) { ExpectPreparedExchange(std::nullopt); }

TEST(TcpPrepare, GreetsAndConfirmsTheKeyFirstThenSwapsSealedDescriptions) {
  ExpectPreparedExchange(Key("prepare"));
}

// Only the client prepares: the server's Exchange() takes it as any client.
TEST(TcpPrepare, APreparedClientMeetsAPlainServer) {
  auto server = LoopbackServer();
  auto client = LoopbackClient(server->port());
  auto fs =
      std::async(std::launch::async, [&] { return server->Exchange(MakeEndpoint("s", 1), 5s); });
  ASSERT_TRUE(client->Prepare(5s));
  auto rc = client->Exchange(MakeEndpoint("c", 1), 5s);
  ASSERT_TRUE(rc) << rc.error().ToString();
  ASSERT_TRUE(fs.get());
}

// Nobody listens: Prepare() times out within its deadline, and an Exchange()
// after it starts over (connects again) rather than trusting a dead session.
TEST(TcpPrepare, AFailedPrepareLeavesExchangeToStartOver) {
  uint16_t port;
  { port = LoopbackServer()->port(); }  // a port nobody listens on now
  auto client = LoopbackClient(port);
  const auto t0 = Clock::now();
  auto p = client->Prepare(300ms);
  ASSERT_FALSE(p);
  EXPECT_LT(Clock::now() - t0, 2s) << "bounded by Prepare's deadline";
  TcpServerOptions o;
  o.bind_address = "127.0.0.1";
  o.port = port;
  auto server = TcpExchanger::CreateServer(std::move(o));
  ASSERT_TRUE(server) << server.error().ToString();
  auto fs =
      std::async(std::launch::async, [&] { return (*server)->Exchange(MakeEndpoint("s", 1), 5s); });
  auto rc = client->Exchange(MakeEndpoint("c", 1), 5s);
  ASSERT_TRUE(rc) << rc.error().ToString();
  ASSERT_TRUE(fs.get());
}

// A key mismatch shows at Prepare(), before any description is sent.
TEST(TcpPrepare, AKeyMismatchIsRefusedAtPrepare) {
  auto server = LoopbackServer(Key("one"));
  auto client = LoopbackClient(server->port(), Key("two"));
  auto fs = std::async(std::launch::async, [&] { return server->Prepare(3s); });
  auto p = client->Prepare(3s);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::kAuth) << p.error().ToString();
  EXPECT_EQ(client->stats().frames_sent, 2u) << "hello and confirm only, no description";
  (void)fs.get();
}

}  // namespace
}  // namespace qpconnect::oob
