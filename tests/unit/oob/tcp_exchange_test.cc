// SPDX-License-Identifier: MIT
// TcpExchanger on loopback: pairwise, batching, barrier, abort, PSK (accept,
// wrong key, one side without key, replay, tamper, nothing disclosed before
// key confirmation), every hostile input, stray clients rejected while the
// server keeps listening, the peer watched during traffic (PollPeer), and
// the description cap by QP count. Listeners use port 0.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exchange_samples.h"
#include "qpconnect/log.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/tcp.h"
#include "skip_or_fail.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::unique_ptr<TcpExchanger> Server(std::optional<Psk> psk = std::nullopt, bool persistent = false,
                                     std::chrono::milliseconds handshake_timeout = 5s,
                                     uint32_t max_rejected_clients = 64) {
  TcpServerOptions o;
  o.bind_address = "127.0.0.1";
  o.port = 0;
  o.persistent = persistent;
  o.psk = std::move(psk);
  o.handshake_timeout = handshake_timeout;
  o.max_rejected_clients = max_rejected_clients;
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

FrameType TypeOf(const std::string& frame) { return static_cast<FrameType>(frame.at(5)); }

// One whole frame from `fd`, or what there was when the stream ended (fewer
// than kFrameHeaderBytes bytes: closed). Unlike ReadFrame(), an end of
// stream is not a test failure.
std::string FrameOrEnd(int fd) {
  std::string h = ReadUpTo(fd, kFrameHeaderBytes);
  if (h.size() < kFrameHeaderBytes) return h;
  auto header = DecodeFrameHeader(h, kDefaultMaxPayloadBytes);
  return header ? h + ReadUpTo(fd, header->BodyBytes()) : h;
}

// Captures the library's log lines while it lives.
class LogCapture {
 public:
  LogCapture() {
    previous_ = SetLogHandler([this](LogLevel, std::string_view m) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(m);
    });
  }
  ~LogCapture() { SetLogHandler(previous_); }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  LogHandler previous_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// A transparent relay between a client connected to it and a server: whole
// frames in both directions, in the order they come, each passed through
// `edit(direction, index, frame)` (direction 0: client to server; index
// counts frames per direction). Records what it forwarded; ends when either
// side closes.
class FrameRelay {
 public:
  using Edit = std::function<std::string(int direction, int index, std::string frame)>;
  FrameRelay(uint16_t server_port, Edit edit = nullptr) : edit_(std::move(edit)) {
    done_ = std::async(std::launch::async, [this, server_port] {
      Raw client = listener_.Accept();
      Raw server = Raw::Connect(server_port);
      const Raw* from[2] = {&client, &server};
      const Raw* to[2] = {&server, &client};
      int index[2] = {0, 0};
      for (;;) {
        pollfd p[2] = {{client.fd(), POLLIN, 0}, {server.fd(), POLLIN, 0}};
        if (::poll(p, 2, 5000) <= 0) return;
        for (int d = 0; d < 2; ++d) {
          if (p[d].revents == 0) continue;
          std::string frame = FrameOrEnd(from[d]->fd());
          if (frame.size() < kFrameHeaderBytes) return;  // closed
          {
            std::lock_guard<std::mutex> lock(mu_);
            frames_[d].push_back(frame);
          }
          if (edit_) frame = edit_(d, index[d], frame);
          ++index[d];
          if (::send(to[d]->fd(), frame.data(), frame.size(), MSG_NOSIGNAL) < 0) return;
        }
      }
    });
  }
  ~FrameRelay() {
    if (done_.valid()) done_.wait();
  }
  uint16_t port() const { return listener_.port(); }
  // The frames sent in `direction` so far (waits for the relay to end).
  std::vector<std::string> Frames(int direction) {
    done_.wait();
    std::lock_guard<std::mutex> lock(mu_);
    return frames_[direction];
  }

 private:
  RawListener listener_;
  Edit edit_;
  std::mutex mu_;
  std::vector<std::string> frames_[2];
  std::future<void> done_;
};

// Reads frames from `raw` until it closes; their types.
std::vector<FrameType> TypesUntilClosed(Raw& raw) {
  std::vector<FrameType> types;
  for (;;) {
    std::string f = FrameOrEnd(raw.fd());
    if (f.size() < kFrameHeaderBytes) return types;
    types.push_back(TypeOf(f));
  }
}

// A confirm frame from a side without the key: right shape, wrong MAC.
std::string ForgedConfirm(const Nonce& sender, const std::string& receiver_hello) {
  Frame f;
  f.type = FrameType::kConfirm;
  f.flags = kFrameFlagBound | kFrameFlagMac;
  f.payload.assign(sender.begin(), sender.end());
  f.payload += receiver_hello.substr(kFrameHeaderBytes, kNonceBytes);
  f.payload += std::string(4, '\0');
  f.mac = std::string(kFrameMacBytes, 'x');
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
  // The two ends, for the joint GID choice: IPv4 as ::ffff:a.b.c.d.
  const std::vector<Gid> ends = {*GidFromString("::ffff:127.0.0.1"),
                                 *GidFromString("::ffff:127.0.0.1")};
  EXPECT_EQ(client->Addresses(), ends);
  EXPECT_EQ(server->Addresses(), ends);
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
  LogCapture log;
  auto server = Server(Key("one"));
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 1s); });
  auto rc = Client(server->port(), Key("two"))->Exchange(MakeEndpoint("c", 1), 2s);
  auto rs = fs.get();  // it rejected the client and waited for another
  ASSERT_FALSE(rc);
  ASSERT_FALSE(rs);
  EXPECT_EQ(rc.error().code, ErrorCode::kAuth) << rc.error().ToString();
  EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
  for (const Error* e : {&rc.error(), &rs.error()}) {
    EXPECT_NE(e->detail.find("key confirmation failed"), std::string::npos) << e->ToString();
    EXPECT_NE(e->operation.find("tcp 127.0.0.1:"), std::string::npos) << e->ToString();
  }
  EXPECT_NE(rs.error().detail.find("1 peer rejected"), std::string::npos) << rs.error().detail;
  ASSERT_EQ(log.lines().size(), 1u);
  EXPECT_NE(log.lines()[0].find("rejected tcp 127.0.0.1:"), std::string::npos) << log.lines()[0];
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

TEST(TcpExchanger, ReplayedSessionIsRefused) {
  // Record an authentic session through a relay: the client's hello, confirm
  // and (encrypted) description.
  std::vector<std::string> recorded;
  {
    auto server = Server(Key("k"));
    auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
    FrameRelay relay(server->port());
    ASSERT_TRUE(Client(relay.port(), Key("k"))->Exchange(MakeEndpoint("victim", 1), 2s));
    ASSERT_TRUE(fs.get());
    server.reset();
    recorded = relay.Frames(0);
  }
  ASSERT_EQ(recorded.size(), 3u);
  EXPECT_EQ(TypeOf(recorded[1]), FrameType::kConfirm);
  EXPECT_EQ(TypeOf(recorded[2]), FrameType::kEndpoint);
  // Replay them to a new server with the key: the confirm is bound to the old
  // session's nonces, so the replayer proves nothing and learns nothing.
  auto server = Server(Key("k"));
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 1s); });
  Raw attacker = Raw::Connect(server->port());
  attacker.Send(recorded[0]);
  attacker.Send(recorded[1]);
  attacker.Send(recorded[2]);
  const std::vector<FrameType> got = TypesUntilClosed(attacker);
  EXPECT_EQ(got, (std::vector<FrameType>{FrameType::kHello, FrameType::kConfirm}));
  auto rs = fs.get();
  ASSERT_FALSE(rs);
  EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
  EXPECT_NE(rs.error().detail.find("replayed"), std::string::npos) << rs.error().detail;
}

TEST(TcpExchanger, TamperedDescriptionInTransitIsRefused) {
  // A relay between a real client and a real server flips one byte of the
  // client's encrypted description (its third frame: hello, confirm, then it).
  auto server = Server(Key("k"));
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server); });
  FrameRelay relay(server->port(), [](int direction, int index, std::string frame) {
    if (direction == 0 && index == 2) frame[kFrameHeaderBytes + 40] ^= 0x20;  // after the binding
    return frame;
  });
  auto rc = Client(relay.port(), Key("k"))->Exchange(MakeEndpoint("c", 3), 2s);
  auto rs = fs.get();
  ASSERT_FALSE(rs);
  EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
  EXPECT_NE(rs.error().detail.find("altered in transit"), std::string::npos);
  EXPECT_TRUE(rc) << rc.error().ToString();  // the server's description was untouched
}

// Issue 18: a side that claims a PSK it lacks learns the other's nonce and
// confirmation tag, never its description, whichever side it plays.
TEST(TcpExchanger, ClientClaimingAKeyItLacksGetsNoDescription) {
  auto server = Server(Key("k"));
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 1s); });
  const Nonce nonce = *RandomNonce();
  {
    Raw liar = Raw::Connect(server->port());
    liar.Send(Hello(nonce, /*psk=*/true));
    const std::string server_hello = liar.RecvFrame();
    liar.Send(ForgedConfirm(nonce, server_hello));
    const std::vector<FrameType> got = TypesUntilClosed(liar);
    EXPECT_EQ(got, (std::vector<FrameType>{FrameType::kConfirm}));
  }
  {
    // One that claims the key and then just waits gets no more.
    Raw waiter = Raw::Connect(server->port());
    waiter.Send(Hello(nonce, /*psk=*/true));
    EXPECT_EQ(TypesUntilClosed(waiter),
              (std::vector<FrameType>{FrameType::kHello, FrameType::kConfirm}));
  }
  auto rs = fs.get();
  ASSERT_FALSE(rs);
  // The deadline passed on the silent one: the liar's rejection explains it.
  EXPECT_EQ(rs.error().code, ErrorCode::kAuth) << rs.error().ToString();
  EXPECT_NE(rs.error().detail.find("1 peer rejected"), std::string::npos) << rs.error().detail;
}

TEST(TcpExchanger, ServerClaimingAKeyItLacksGetsNoDescription) {
  RawListener liar;
  auto fc = std::async(std::launch::async, [&] {
    return Client(liar.port(), Key("k"))->Exchange(MakeEndpoint("c", 1), 2s);
  });
  Raw conn = liar.Accept();
  const std::string client_hello = conn.RecvFrame();
  const Nonce nonce = *RandomNonce();
  conn.Send(Hello(nonce, /*psk=*/true));
  conn.Send(ForgedConfirm(nonce, client_hello));
  EXPECT_EQ(TypesUntilClosed(conn), (std::vector<FrameType>{FrameType::kConfirm}));
  auto rc = fc.get();
  ASSERT_FALSE(rc);
  EXPECT_EQ(rc.error().code, ErrorCode::kAuth) << rc.error().ToString();
  EXPECT_NE(rc.error().detail.find("key confirmation failed"), std::string::npos);
  EXPECT_NE(rc.error().operation.find("tcp 127.0.0.1:" + std::to_string(liar.port())),
            std::string::npos)
      << rc.error().ToString();
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
  std::string old_version = Hello(nonce, false);
  old_version[4] = 1;
  const HostileCase cases[] = {
      {"http", [](Raw& r) { r.Send("GET / HTTP/1.0\r\n\r\n"); }, ErrorCode::kProtocol,
       "not a qpconnect frame"},
      {"pingpong", [](Raw& r) { r.Send("001a:0004b2:abcdef:fe80000000000000"); },
       ErrorCode::kProtocol, "pingpong"},
      {"oversized", [](Raw& r) { r.Send(EncodeFrameHeader(FrameType::kHello, 0, 0xffffffffu)); },
       ErrorCode::kProtocol, "oversized"},
      {"previous version", [&](Raw& r) { r.Send(old_version); }, ErrorCode::kIncompatible,
       "unsupported frame version 1; this build speaks version 2"},
      {"truncated header then close",
       [&](Raw& r) {
         r.Send(Hello(nonce, false).substr(0, 7));
         r.Close();
       },
       ErrorCode::kIo, "mid-message: got 7 bytes of the 12-byte header of its hello frame"},
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
    // Strays (before the hello is accepted) are rejected and the server
    // waits on: it reports the last rejection at its deadline.
    auto server = Server();
    auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 700ms); });
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

TEST(TcpExchanger, PersistentServerServesTheNextClientsPastBadOnes) {
  auto server = Server(std::nullopt, /*persistent=*/true, /*handshake_timeout=*/300ms);
  auto fs = std::async(std::launch::async, [&] {
    std::vector<Result<EndpointInfo>> results;
    for (int i = 0; i < 2; ++i) results.push_back(server->Exchange(MakeEndpoint("s", 1), 5s));
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
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0]) << results[0].error().ToString();
  EXPECT_EQ(results[0]->identity.host, "good");
  ASSERT_TRUE(results[1]) << results[1].error().ToString();
  EXPECT_EQ(results[1]->identity.host, "again");
}

// Issue 11: stray clients (no key, another key, a port scanner, one that
// trickles bytes) are rejected with one log line each naming their address
// and why; the server keeps listening and serves the real peer within the
// same deadline.
TEST(TcpExchanger, StrayClientsDoNotEndTheRendezvous) {
  LogCapture log;
  auto server = Server(Key("k"), /*persistent=*/false, /*handshake_timeout=*/400ms);
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 10s); });
  const auto start = Clock::now();
  EXPECT_FALSE(Client(server->port())->Exchange(MakeEndpoint("keyless", 1), 2s));
  EXPECT_FALSE(Client(server->port(), Key("other"))->Exchange(MakeEndpoint("wrong", 1), 2s));
  {
    Raw scanner = Raw::Connect(server->port());
    scanner.Send("SSH-2.0-OpenSSH_9.2\r\n");
    EXPECT_TRUE(scanner.WaitClosed());
  }
  {
    Raw trickle = Raw::Connect(server->port());
    const std::string hello = Hello(*RandomNonce(), true);
    for (size_t i = 0; i < 3; ++i) {  // 300 ms: more it does not get to send
      trickle.Send(hello.substr(i, 1));
      std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(trickle.WaitClosed());
  }
  auto rc = Client(server->port(), Key("k"))->Exchange(MakeEndpoint("real", 1), 5s);
  ASSERT_TRUE(rc) << rc.error().ToString();
  auto rs = fs.get();
  ASSERT_TRUE(rs) << rs.error().ToString();
  EXPECT_EQ(rs->identity.host, "real");
  EXPECT_LT(Clock::now() - start, 5s);
  const auto lines = log.lines();
  ASSERT_EQ(lines.size(), 4u);
  for (const auto& l : lines) EXPECT_NE(l.find("rejected tcp 127.0.0.1:"), std::string::npos) << l;
  EXPECT_NE(lines[0].find("the peer has none"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("key confirmation failed"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("SSH banner"), std::string::npos) << lines[2];
  // A peer sending a byte at a time is reported with what it sent.
  EXPECT_NE(lines[3].find("sent only"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[3].find("sent nothing"), std::string::npos) << lines[3];
}

TEST(TcpExchanger, RejectionsAreBounded) {
  auto server = Server(std::nullopt, false, 5s, /*max_rejected_clients=*/3);
  auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 5s); });
  for (int i = 0; i < 3; ++i) {
    Raw scanner = Raw::Connect(server->port());
    scanner.Send("GET / HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(scanner.WaitClosed());
  }
  auto rs = fs.get();
  ASSERT_FALSE(rs);
  EXPECT_EQ(rs.error().code, ErrorCode::kProtocol);
  EXPECT_NE(rs.error().detail.find("gave up after rejecting 3 peers"), std::string::npos)
      << rs.error().ToString();
}

// Issue 11: before a peer has proved itself it can make the server read at
// most a small frame; a description is capped by this side's QP count.
TEST(TcpExchanger, OversizedFramesAreRefusedFromTheHeaderBeforeAuthenticationAndByQpCount) {
  {
    auto server = Server(Key("k"));
    auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 700ms); });
    Raw raw = Raw::Connect(server->port());
    raw.Send(EncodeFrameHeader(FrameType::kHello, kFrameFlagPsk, 14700000));
    EXPECT_TRUE(raw.WaitClosed());
    auto rs = fs.get();
    ASSERT_FALSE(rs);
    EXPECT_NE(rs.error().detail.find("oversized frame: payload length 14700000 exceeds the cap of "
                                     "2048"),
              std::string::npos)
        << rs.error().ToString();
  }
  {
    // No key: after the hellos, a description frame announcing 2^20 QPs with
    // MRs (14.7 MB) to a 1-QP server is refused from its header.
    auto server = Server();
    auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 2s); });
    Raw raw = Raw::Connect(server->port());
    const Nonce nonce{};  // sorts lowest: the server reads first
    raw.Send(Hello(nonce, false));
    raw.RecvFrame();
    raw.Send(EncodeFrameHeader(FrameType::kEndpoint, kFrameFlagBound, 14700000));
    auto rs = fs.get();
    ASSERT_FALSE(rs);
    EXPECT_EQ(rs.error().code, ErrorCode::kProtocol);
    EXPECT_NE(rs.error().detail.find("a description of at most 1 QP"), std::string::npos)
        << rs.error().ToString();
  }
  {
    // A peer with more QPs than this side is refused by name.
    auto server = Server();
    auto fs = std::async(std::launch::async, [&] { return ServeOne(*server, 2s); });
    auto rc = Client(server->port())->Exchange(MakeEndpoint("c", 3), 2s);
    auto rs = fs.get();
    ASSERT_FALSE(rs);
    EXPECT_EQ(rs.error().code, ErrorCode::kIncompatible);
    EXPECT_NE(rs.error().detail.find("the peer describes 3 QPs, more than the 1 of this side"),
              std::string::npos)
        << rs.error().ToString();
  }
}

// Issue 11: during traffic the caller polls the exchanger; a peer that closed,
// was killed, or aborted is news at once, and a barrier it sent early is kept.
TEST(TcpExchanger, PollPeerNoticesAClosedOrAbortingPeerAndKeepsAnEarlyBarrier) {
  for (int scenario = 0; scenario < 3; ++scenario) {
    SCOPED_TRACE(scenario);
    auto server = Server(Key("k"));
    auto client = Client(server->port(), Key("k"));
    auto fs = std::async(std::launch::async, [&] {
      auto r = server->Exchange(MakeEndpoint("s", 1), 5s);
      return r && server->Barrier("rts", 5s);
    });
    ASSERT_TRUE(client->Exchange(MakeEndpoint("c", 1), 5s));
    ASSERT_TRUE(client->Barrier("rts", 5s));
    ASSERT_TRUE(fs.get());
    EXPECT_TRUE(server->PollPeer());  // nothing yet
    if (scenario == 0) {
      client.reset();  // the process went away: its connection closes
    } else if (scenario == 1) {
      client->Abort("traffic failed: content mismatch", 1s);
    } else {
      auto fb = std::async(std::launch::async, [&] { return client->Barrier("done", 5s); });
      std::this_thread::sleep_for(100ms);
      EXPECT_TRUE(server->PollPeer());  // the early barrier is kept, not an error
      EXPECT_TRUE(server->PollPeer());
      EXPECT_TRUE(server->Barrier("done", 5s));
      EXPECT_TRUE(fb.get());
      continue;
    }
    const auto start = Clock::now();
    Result<void> polled = Ok();
    while (polled && Clock::now() - start < 2s) {
      polled = server->PollPeer();
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_FALSE(polled);
    if (scenario == 0) {
      EXPECT_EQ(polled.error().code, ErrorCode::kIo) << polled.error().ToString();
      EXPECT_NE(polled.error().detail.find("closed the connection"), std::string::npos);
    } else {
      EXPECT_EQ(polled.error().code, ErrorCode::kProtocol) << polled.error().ToString();
      EXPECT_NE(polled.error().detail.find("the peer aborted: traffic failed"), std::string::npos);
    }
    EXPECT_FALSE(server->PollPeer());  // it stays failed
  }
}

// A server and its client past the exchange and the "rts" barrier, as
// during traffic.
struct PastRts {
  explicit PastRts(std::optional<Psk> key = std::nullopt)
      : server(Server(key)), client(Client(server->port(), key)) {
    auto fs = std::async(std::launch::async, [&] {
      auto r = server->Exchange(MakeEndpoint("s", 1), 5s);
      return r && server->Barrier("rts", 5s);
    });
    EXPECT_TRUE(client->Exchange(MakeEndpoint("c", 1), 5s));
    EXPECT_TRUE(client->Barrier("rts", 5s));
    EXPECT_TRUE(fs.get());
  }
  std::unique_ptr<TcpExchanger> server;
  std::unique_ptr<TcpExchanger> client;
};

// Issue 31: a side whose proof failed enters a "proof-failed" barrier with a
// note (its port counters); its peer, still waiting for a completion, sees
// the stage with PeerStage() without taking it, then trades its own note.
// With and without a key (the note is sealed with the stage).
TEST(TcpExchanger, BarrierWithNoteTradesNotesAndPeerStageShowsItEarly) {
  for (bool keyed : {false, true}) {
    SCOPED_TRACE(keyed);
    PastRts p(keyed ? std::optional(Key("k")) : std::nullopt);
    EXPECT_FALSE(p.server->PeerStage());  // nothing waits
    auto fc = std::async(std::launch::async, [&] {
      return p.client->BarrierWithNote("proof-failed", "cause=retry-exceeded;c.sent_pkts=8", 5s);
    });
    std::optional<std::string> seen;
    for (int i = 0; i < 200 && !seen; ++i) {
      ASSERT_TRUE(p.server->PollPeer());
      seen = p.server->PeerStage();
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(seen);
    EXPECT_EQ(*seen, "proof-failed");
    EXPECT_EQ(p.server->PeerStage(), "proof-failed");  // not taken
    auto got = p.server->BarrierWithNote("proof-failed", "cause=peer-failed;c.rcvd_pkts=0", 5s);
    ASSERT_TRUE(got) << got.error().ToString();
    EXPECT_EQ(*got, "cause=retry-exceeded;c.sent_pkts=8");
    auto theirs = fc.get();
    ASSERT_TRUE(theirs) << theirs.error().ToString();
    EXPECT_EQ(*theirs, "cause=peer-failed;c.rcvd_pkts=0");
  }
}

TEST(TcpExchanger, BarrierWithNoteRefusesABadNoteAndAStageMismatch) {
  PastRts p;
  auto bad = p.client->BarrierWithNote("proof-failed", "line\nbreak", 1s);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  auto fc = std::async(std::launch::async,
                       [&] { return p.client->BarrierWithNote("proof-failed", "n", 5s); });
  auto done = p.server->Barrier("done", 5s);  // a peer that never traded: refused, not misread
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, ErrorCode::kProtocol);
  EXPECT_NE(done.error().detail.find("proof-failed"), std::string::npos) << done.error().ToString();
  EXPECT_FALSE(fc.get());
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
  if (!server) QPC_SKIP_OR_FAIL("no IPv6 loopback: " << server.error().ToString());
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

// A measurement, not a check (no doc quotes its figures): time and bytes of
// an exchange of up to 2^20 QPs; run with --gtest_also_run_disabled_tests.
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
