// TcpExchanger on loopback: pairwise, batching, barrier, abort, PSK (accept,
// wrong key, one side without key, replay), every hostile input, and a
// persistent server surviving bad clients. Listeners use port 0.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>

#include "exchange_samples.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/tcp.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::unique_ptr<TcpExchanger> Server(std::optional<Psk> psk = std::nullopt,
                                     bool persistent = false) {
  TcpServerOptions o;
  o.bind_address = "127.0.0.1";
  o.port = 0;
  o.persistent = persistent;
  o.psk = std::move(psk);
  auto s = TcpExchanger::CreateServer(std::move(o));
  EXPECT_TRUE(s) << s.error().ToString();
  return std::move(*s);
}

std::unique_ptr<TcpExchanger> Client(uint16_t port, std::optional<Psk> psk = std::nullopt,
                                     std::string host = "127.0.0.1") {
  TcpClientOptions o;
  o.host = std::move(host);
  o.port = port;
  o.psk = std::move(psk);
  auto c = TcpExchanger::CreateClient(std::move(o));
  EXPECT_TRUE(c) << c.error().ToString();
  return std::move(*c);
}

// A plain blocking socket for playing a hostile peer.
class Raw {
 public:
  static Raw Connect(uint16_t port) {
    Raw r(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(r.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return r;
  }
  explicit Raw(int fd) : fd_(fd) {}
  Raw(Raw&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  ~Raw() { Close(); }
  void Close() { CloseFd(fd_); }
  int fd() const { return fd_; }
  void Send(const std::string& s) const {
    ASSERT_EQ(::send(fd_, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  // One whole frame (header, payload, MAC).
  std::string RecvFrame() const { return ReadFrame(fd_); }
  // Reads and drops whatever arrives until the peer closes (true) or 5 s
  // pass (false).
  bool WaitClosed() const {
    const auto end = Clock::now() + 5s;
    while (Clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      if (::recv(fd_, buf, sizeof buf, 0) <= 0) return true;
    }
    return false;
  }

 private:
  int fd_;
};

// A listening plain socket on 127.0.0.1:0.
class RawListener {
 public:
  RawListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~RawListener() { ::close(fd_); }
  uint16_t port() const { return port_; }
  Raw Accept() const { return Raw(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)); }

 private:
  int fd_;
  uint16_t port_ = 0;
};

std::string Hello(const Nonce& n, bool psk) {
  Frame f;
  f.type = FrameType::kHello;
  f.flags = psk ? kFrameFlagPsk : 0;
  f.payload.assign(n.begin(), n.end());
  return EncodeFrame(f);
}

// A bound, unauthenticated frame as a peer without PSK sends it (docs/oob.md).
std::string Bound(FrameType type, const Nonce& sender, const std::string& receiver_hello,
                  uint32_t seq, const std::string& body) {
  Frame f;
  f.type = type;
  f.flags = kFrameFlagBound;
  f.payload.assign(sender.begin(), sender.end());
  f.payload += receiver_hello.substr(kFrameHeaderBytes, kNonceBytes);
  f.payload += std::string{'\0', '\0', '\0', static_cast<char>(seq)};
  f.payload += body;
  return EncodeFrame(f);
}

Result<EndpointInfo> ServeOne(TcpExchanger& server, std::chrono::milliseconds deadline = 2s) {
  return server.Exchange(MakeEndpoint("server", 1), deadline);
}

TEST(TcpExchanger, ExchangesOneQpEachWay) {
  auto server = Server();
  ASSERT_NE(server->port(), 0);
  auto fs =
      std::async(std::launch::async, [&] { return server->Exchange(MakeEndpoint("s", 1), 5s); });
  auto client = Client(server->port());
  auto rc = client->Exchange(MakeEndpoint("c", 1), 5s);
  auto rs = fs.get();
  ASSERT_TRUE(rc) << rc.error().ToString();
  ASSERT_TRUE(rs) << rs.error().ToString();
  EXPECT_EQ(*rc, MakeEndpoint("s", 1));
  EXPECT_EQ(*rs, MakeEndpoint("c", 1));
  EXPECT_NE(server->peer_address().find("127.0.0.1:"), std::string::npos);
  EXPECT_EQ(client->peer_address(), "127.0.0.1:" + std::to_string(server->port()));
}

TEST(TcpExchanger, ExchangesTenThousandQpsWithPsk) {
  auto server = Server(Key("k"));
  const auto es = MakeEndpoint("s", 10000);
  const auto ec = MakeEndpoint("c", 10000);
  auto fs = std::async(std::launch::async, [&] { return server->Exchange(es, 10s); });
  auto client = Client(server->port(), Key("k"));
  auto rc = client->Exchange(ec, 10s);
  auto rs = fs.get();
  ASSERT_TRUE(rc) << rc.error().ToString();
  ASSERT_TRUE(rs) << rs.error().ToString();
  EXPECT_EQ(*rc, es);
  EXPECT_EQ(*rs, ec);
}

TEST(TcpExchanger, BarrierPassesThenMismatchIsRefused) {
  auto server = Server(Key("k"));
  auto client = Client(server->port(), Key("k"));
  ExpectBarrierPassesThenMismatchIsRefused(*client, *server, 1);
}

TEST(TcpExchanger, BarrierWithoutExchangeIsRefused) {
  auto client = Client(18515);
  auto b = client->Barrier("rtr", 100ms);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::kInvalidArgument);
  auto stage = client->Barrier("", 100ms);
  ASSERT_FALSE(stage);
  EXPECT_EQ(stage.error().code, ErrorCode::kInvalidArgument);
}

TEST(TcpExchanger, AbortReachesThePeersBarrier) {
  auto server = Server();
  auto client = Client(server->port());
  ExpectAbortReachesThePeersBarrier(*client, *server);
}

TEST(TcpExchanger, WrongKeyIsRefusedWithAuth) {
  auto server = Server(Key("one"));
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
  auto rc = Client(server->port(), Key("two"))->Exchange(MakeEndpoint("c", 1), 2s);
  auto rs = fs.get();
  ASSERT_FALSE(rc);
  ASSERT_FALSE(rs);
  EXPECT_EQ(rc.error().code, ErrorCode::kAuth) << rc.error().ToString();
  EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
  EXPECT_NE(rs.error().detail.find("PSK differs"), std::string::npos);
}

TEST(TcpExchanger, KeyOnOneSideOnlyIsRefusedWithAuth) {
  for (bool server_has_key : {true, false}) {
    auto server = Server(server_has_key ? std::optional<Psk>(Key("k")) : std::nullopt);
    auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
    auto client =
        Client(server->port(), server_has_key ? std::nullopt : std::optional<Psk>(Key("k")));
    auto rc = client->Exchange(MakeEndpoint("c", 1), 2s);
    auto rs = fs.get();
    ASSERT_FALSE(rc);
    ASSERT_FALSE(rs);
    EXPECT_EQ(rc.error().code, ErrorCode::kAuth) << rc.error().ToString();
    EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
    const auto& keyless = server_has_key ? rc.error() : rs.error();
    const auto& keyed = server_has_key ? rs.error() : rc.error();
    EXPECT_NE(keyless.detail.find("none is configured on this side"), std::string::npos);
    EXPECT_NE(keyed.detail.find("the peer has none"), std::string::npos);
  }
}

TEST(TcpExchanger, ReplayedDescriptionFromAnotherSessionIsRefused) {
  // Record an authentic client description bound to a fake server's nonce.
  // That nonce sorts above any other, so the client sends its description
  // first (the lower nonce does, docs/oob.md) without waiting for ours.
  std::string client_hello, recorded;
  {
    RawListener fake;
    auto fc = std::async(std::launch::async, [&] {
      return Client(fake.port(), Key("k"))->Exchange(MakeEndpoint("victim", 1), 2s);
    });
    Raw conn = fake.Accept();
    client_hello = conn.RecvFrame();
    Nonce highest{};
    highest.fill(0xff);
    conn.Send(Hello(highest, true));
    recorded = conn.RecvFrame();
    conn.Close();
    EXPECT_FALSE(fc.get());
  }
  auto header = DecodeFrameHeader(recorded.substr(0, kFrameHeaderBytes), kDefaultMaxPayloadBytes);
  ASSERT_TRUE(header);
  ASSERT_EQ(header->type, FrameType::kEndpoint);
  // Replay the client's hello and description to a real server with the key.
  auto server = Server(Key("k"));
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
  Raw attacker = Raw::Connect(server->port());
  attacker.Send(client_hello);
  attacker.RecvFrame();  // the server's hello
  attacker.Send(recorded);
  auto rs = fs.get();
  ASSERT_FALSE(rs);
  EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
  EXPECT_NE(rs.error().detail.find("replayed"), std::string::npos) << rs.error().detail;
}

TEST(TcpExchanger, TamperedDescriptionInTransitIsRefused) {
  // A proxy relays frames between a real client and a real server and flips
  // one byte of the client's description.
  auto server = Server(Key("k"));
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
  RawListener proxy;
  auto fc = std::async(std::launch::async, [&] {
    return Client(proxy.port(), Key("k"))->Exchange(MakeEndpoint("c", 3), 2s);
  });
  Raw from_client = proxy.Accept();
  Raw to_server = Raw::Connect(server->port());
  to_server.Send(from_client.RecvFrame());  // hellos pass untouched
  from_client.Send(to_server.RecvFrame());
  // The side whose nonce sorts lower sends its description first; the other
  // answers once it has read it. Relay them in the order they come.
  bool client_done = false;
  bool server_done = false;
  while (!client_done || !server_done) {
    pollfd p[2] = {{from_client.fd(), POLLIN, 0}, {to_server.fd(), POLLIN, 0}};
    ASSERT_GT(::poll(p, 2, 5000), 0);
    if (!client_done && (p[0].revents & POLLIN) != 0) {
      std::string desc = from_client.RecvFrame();
      desc[kFrameHeaderBytes + 40] ^= 0x20;  // inside the body, after the binding
      to_server.Send(desc);
      client_done = true;
    } else if (!server_done && (p[1].revents & POLLIN) != 0) {
      from_client.Send(to_server.RecvFrame());  // the server's description
      server_done = true;
    } else {
      std::this_thread::sleep_for(1ms);
    }
  }
  auto rs = fs.get();
  ASSERT_FALSE(rs);
  EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
  EXPECT_NE(rs.error().detail.find("altered in transit"), std::string::npos);
  EXPECT_TRUE(fc.get());  // the client got the server's untouched description
}

struct HostileCase {
  const char* name;
  std::function<void(Raw&)> act;
  ErrorCode code;
  const char* needle;
};

TEST(TcpExchanger, ServerRefusesEachHostileInputWithADistinctError) {
  const Nonce nonce = *RandomNonce();
  const std::string garbage_body("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
  std::string wrong_version = Hello(nonce, false);
  wrong_version[4] = 2;
  const HostileCase cases[] = {
      {"http", [](Raw& r) { r.Send("GET / HTTP/1.0\r\n\r\n"); }, ErrorCode::kProtocol,
       "not a qpconnect frame"},
      {"pingpong", [](Raw& r) { r.Send("001a:0004b2:abcdef:fe80000000000000"); },
       ErrorCode::kProtocol, "pingpong"},
      {"oversized", [](Raw& r) { r.Send(EncodeFrameHeader(FrameType::kHello, 0, 0xffffffffu)); },
       ErrorCode::kProtocol, "oversized"},
      {"version", [&](Raw& r) { r.Send(wrong_version); }, ErrorCode::kIncompatible,
       "unsupported frame version 2"},
      {"truncated header then close",
       [&](Raw& r) {
         r.Send(Hello(nonce, false).substr(0, 7));
         r.Close();
       },
       ErrorCode::kIo, "mid-message: got 7 of 12"},
      {"close at once", [](Raw& r) { r.Close(); }, ErrorCode::kIo, "before sending its hello"},
      {"not protobuf",
       [&](Raw& r) {
         const std::string server_hello = r.RecvFrame();
         r.Send(Hello(nonce, false));
         r.Send(Bound(FrameType::kEndpoint, nonce, server_hello, 0, garbage_body));
       },
       ErrorCode::kProtocol, "decode peer description"},
      {"vanishes mid-description",
       [&](Raw& r) {
         const std::string server_hello = r.RecvFrame();
         r.Send(Hello(nonce, false));
         const std::string full = Bound(FrameType::kEndpoint, nonce, server_hello, 0,
                                        EncodeBinary(MakeEndpoint("x", 50)));
         r.Send(full.substr(0, full.size() / 2));
         r.Close();
       },
       ErrorCode::kIo, "mid-message"},
      {"hello twice",
       [&](Raw& r) {
         r.RecvFrame();
         r.Send(Hello(nonce, false));
         r.Send(Hello(nonce, false));
       },
       ErrorCode::kProtocol, "got a hello"},
      {"wrong sequence number",
       [&](Raw& r) {
         const std::string server_hello = r.RecvFrame();
         r.Send(Hello(nonce, false));
         r.Send(Bound(FrameType::kEndpoint, nonce, server_hello, 5,
                      EncodeBinary(MakeEndpoint("x", 1))));
       },
       ErrorCode::kAuth, "sequence"},
      {"mac without psk", [&](Raw& r) { r.Send(Hello(nonce, true)); }, ErrorCode::kAuth,
       "requires a pre-shared key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto server = Server();
    auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 2s); });
    Raw raw = Raw::Connect(server->port());
    c.act(raw);
    auto rs = fs.get();
    ASSERT_FALSE(rs);
    EXPECT_EQ(rs.error().code, c.code) << rs.error().ToString();
    EXPECT_NE(rs.error().ToString().find(c.needle), std::string::npos)
        << "'" << c.needle << "' not in: " << rs.error().ToString();
  }
}

TEST(TcpExchanger, SilentClientTimesOutWithinTheDeadline) {
  auto server = Server();
  Raw silent = Raw::Connect(server->port());
  const auto start = Clock::now();
  auto rs = server->Exchange(MakeEndpoint("s", 1), 300ms);
  const auto took = Clock::now() - start;
  ASSERT_FALSE(rs);
  EXPECT_EQ(rs.error().code, ErrorCode::kTimeout);
  EXPECT_NE(rs.error().detail.find("sent nothing"), std::string::npos) << rs.error().detail;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 1s);
  EXPECT_TRUE(silent.WaitClosed());
}

TEST(TcpExchanger, NoClientTimesOutWithinTheDeadline) {
  auto server = Server();
  const auto start = Clock::now();
  auto rs = server->Exchange(MakeEndpoint("s", 1), 200ms);
  ASSERT_FALSE(rs);
  EXPECT_EQ(rs.error().code, ErrorCode::kTimeout);
  EXPECT_NE(rs.error().detail.find("no client connected"), std::string::npos);
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(TcpExchanger, ClientFacingASilentServerTimesOut) {
  RawListener listener;
  auto client = Client(listener.port());
  const auto start = Clock::now();
  auto rc = client->Exchange(MakeEndpoint("c", 1), 300ms);
  const auto took = Clock::now() - start;
  ASSERT_FALSE(rc);
  EXPECT_EQ(rc.error().code, ErrorCode::kTimeout);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 1s);
}

TEST(TcpExchanger, ClientRefusesAGarbageServer) {
  RawListener listener;
  auto fc = std::async(std::launch::async,
                       [&] { return Client(listener.port())->Exchange(MakeEndpoint("c", 1), 2s); });
  Raw conn = listener.Accept();
  conn.Send(std::string(64, '\0'));
  auto rc = fc.get();
  ASSERT_FALSE(rc);
  EXPECT_EQ(rc.error().code, ErrorCode::kProtocol);
}

TEST(TcpExchanger, RefusedConnectionIsAnIoErrorWithoutRetry) {
  uint16_t port;
  { port = Server()->port(); }  // bound, then closed: nothing listens there now
  TcpClientOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.retry_interval = 0ms;
  auto client = TcpExchanger::CreateClient(std::move(o));
  ASSERT_TRUE(client);
  auto rc = (*client)->Exchange(MakeEndpoint("c", 1), 2s);
  ASSERT_FALSE(rc);
  EXPECT_EQ(rc.error().code, ErrorCode::kIo);
  EXPECT_EQ(rc.error().sys_errno, ECONNREFUSED);
}

TEST(TcpExchanger, ClientRetriesUntilTheServerListens) {
  uint16_t port;
  { port = Server()->port(); }
  auto client = Client(port);  // retries every 100 ms by default
  auto fc =
      std::async(std::launch::async, [&] { return client->Exchange(MakeEndpoint("c", 1), 5s); });
  TcpServerOptions o;
  o.bind_address = "127.0.0.1";
  o.port = port;
  auto server = TcpExchanger::CreateServer(std::move(o));
  ASSERT_TRUE(server) << server.error().ToString();
  auto rs = (*server)->Exchange(MakeEndpoint("s", 1), 5s);
  EXPECT_TRUE(rs) << rs.error().ToString();
  auto rc = fc.get();
  EXPECT_TRUE(rc) << rc.error().ToString();
}

TEST(TcpExchanger, PersistentServerSurvivesBadClients) {
  auto server = Server(std::nullopt, /*persistent=*/true);
  auto fs = std::async(std::launch::async, [&] {
    std::vector<Result<EndpointInfo>> results;
    for (int i = 0; i < 5; ++i) results.push_back(server->Exchange(MakeEndpoint("s", 1), 500ms));
    return results;
  });
  {
    Raw garbage = Raw::Connect(server->port());
    garbage.Send("this is not a frame at all");
    EXPECT_TRUE(garbage.WaitClosed());
  }
  {
    Raw silent = Raw::Connect(server->port());
    EXPECT_TRUE(silent.WaitClosed());  // the server gives up on it
  }
  {
    Raw early = Raw::Connect(server->port());
    early.Send(Hello(*RandomNonce(), false).substr(0, 5));
  }
  auto good = Client(server->port())->Exchange(MakeEndpoint("good", 1), 5s);
  EXPECT_TRUE(good) << good.error().ToString();
  auto again = Client(server->port())->Exchange(MakeEndpoint("again", 1), 5s);
  EXPECT_TRUE(again) << again.error().ToString();
  auto results = fs.get();
  ASSERT_EQ(results.size(), 5u);
  ASSERT_FALSE(results[0]);
  EXPECT_EQ(results[0].error().code, ErrorCode::kProtocol);
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code, ErrorCode::kTimeout);
  ASSERT_FALSE(results[2]);
  EXPECT_EQ(results[2].error().code, ErrorCode::kIo);
  ASSERT_TRUE(results[3]) << results[3].error().ToString();
  EXPECT_EQ(results[3]->identity.host, "good");
  ASSERT_TRUE(results[4]) << results[4].error().ToString();
  EXPECT_EQ(results[4]->identity.host, "again");
}

TEST(TcpExchanger, DefaultServerClosesItsListenerAfterOneClient) {
  auto server = Server();
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
  ASSERT_TRUE(Client(server->port())->Exchange(MakeEndpoint("c", 1), 2s));
  ASSERT_TRUE(fs.get());
  auto again = server->Exchange(MakeEndpoint("s", 1), 100ms);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
}

TEST(TcpExchanger, FailedClientDoesNotCloseADefaultServer) {
  auto server = Server();
  {
    Raw bad = Raw::Connect(server->port());
    bad.Send("garbage garbage garbage");
    EXPECT_FALSE(ServeOne(*server));
  }
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
  EXPECT_TRUE(Client(server->port())->Exchange(MakeEndpoint("c", 1), 2s));
  EXPECT_TRUE(fs.get());
}

TEST(TcpExchanger, WorksOverIpv6Loopback) {
  TcpServerOptions o;
  o.bind_address = "::1";
  o.port = 0;
  auto server = TcpExchanger::CreateServer(std::move(o));
  if (!server) GTEST_SKIP() << "no IPv6 loopback: " << server.error().ToString();
  auto fs = std::async(std::launch::async, [&] { return ServeOne(**server); });
  auto client = Client((*server)->port(), std::nullopt, "[::1]");
  auto rc = client->Exchange(MakeEndpoint("c", 1), 2s);
  ASSERT_TRUE(rc) << rc.error().ToString();
  ASSERT_TRUE(fs.get());
  EXPECT_EQ(client->peer_address(), "[::1]:" + std::to_string((*server)->port()));
}

TEST(TcpExchanger, AnyAddressServerTakesIpv4ClientsAndHostNames) {
  TcpServerOptions o;
  o.port = 0;  // bind_address empty: any
  auto server = TcpExchanger::CreateServer(std::move(o));
  ASSERT_TRUE(server) << server.error().ToString();
  auto fs = std::async(std::launch::async, [&] { return ServeOne(**server); });
  auto rc =
      Client((*server)->port(), std::nullopt, "localhost")->Exchange(MakeEndpoint("c", 1), 2s);
  ASSERT_TRUE(rc) << rc.error().ToString();
  ASSERT_TRUE(fs.get());
}

TEST(TcpExchanger, OptionsAreChecked) {
  EXPECT_EQ(TcpClientOptions{}.port, 18515);
  EXPECT_EQ(TcpServerOptions{}.port, 18515);
  auto no_host = TcpExchanger::CreateClient(TcpClientOptions{});
  ASSERT_FALSE(no_host);
  EXPECT_EQ(no_host.error().code, ErrorCode::kInvalidArgument);
  TcpServerOptions small;
  small.port = 0;
  small.max_payload_bytes = 1;
  EXPECT_FALSE(TcpExchanger::CreateServer(std::move(small)));
  TcpServerOptions unresolvable;
  unresolvable.port = 0;
  unresolvable.bind_address = "no-such-host.invalid";
  auto bad = TcpExchanger::CreateServer(std::move(unresolvable));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kNotFound);
}

TEST(TcpExchanger, BusyPortIsAnIoError) {
  auto first = Server();
  TcpServerOptions o;
  o.bind_address = "127.0.0.1";
  o.port = first->port();
  auto second = TcpExchanger::CreateServer(std::move(o));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, ErrorCode::kIo);
  EXPECT_EQ(second.error().sys_errno, EADDRINUSE);
}

// Figures for docs/oob.md: run with --gtest_also_run_disabled_tests.
TEST(TcpExchanger, DISABLED_MeasureMillionQps) {
  for (uint32_t n : {1u, 10000u, 1u << 20, 0u}) {
    const bool consecutive = n == 0;  // last round: 2^20 consecutive QPNs
    if (consecutive) n = 1u << 20;
    auto e = MakeEndpoint("s", n);
    for (uint32_t i = 0; i < n; ++i) {  // scattered 24-bit QPNs (a bijection: no repeats)
      if (!consecutive) e.qps[i].qpn = (i * 2654435761u + 1) & kQpnMask;
      e.qps[i].psn = (i * 40503u + 0x800000) & kPsnMask;
    }
    const size_t bytes = EncodeBinary(e).size();
    auto server = Server(Key("k"));
    auto fs = std::async(std::launch::async, [&] { return server->Exchange(e, 60s); });
    auto client = Client(server->port(), Key("k"));
    const auto start = Clock::now();
    auto rc = client->Exchange(e, 60s);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    ASSERT_TRUE(rc) << rc.error().ToString();
    ASSERT_TRUE(fs.get());
    std::printf("tcp: %u QPs (%s QPNs): %zu bytes encoded, %.2f bytes/QP, exchange %lld ms\n", n,
                consecutive ? "consecutive" : "scattered", bytes, static_cast<double>(bytes) / n,
                static_cast<long long>(ms.count()));
  }
}

}  // namespace
}  // namespace qpconnect::oob
