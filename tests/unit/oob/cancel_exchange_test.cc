// SPDX-License-Identifier: MIT
// Ending a wait early and telling the peer why (Exchanger::Cancel(), the
// process-wide interrupt flag): the stopped side fails within about 100 ms
// with an error IsCancelled() recognises, never kTimeout, and the peer fails
// with "the peer aborted: <reason>" (not "the peer closed the connection")
// whether the stop came while waiting for the peer's hello, for its
// description or in the barrier. Over tcp (a real TcpExchanger server, and a
// client that is a socket the test holds back, then a channel exchanger over
// it), a caller's blocking channel (socketpair) and files.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "exchange_samples.h"
#include "qpconnect/oob/channel.h"
#include "qpconnect/oob/file.h"
#include "qpconnect/oob/interrupt.h"
#include "qpconnect/oob/tcp.h"
#include "socket_channel.h"
#include "tcp_loopback.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;

constexpr char kReason[] = "server interrupted (SIGINT)";
// A stopped wait ends within kInterruptPoll; this leaves room for a loaded
// machine.
constexpr auto kPrompt = 1s;

// A socket connected to 127.0.0.1:`port` that sends nothing until the test
// lets a channel exchanger use it.
int ConnectTo(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// A channel exchanger over `channel` declaring `role`.
std::unique_ptr<Exchanger> OverChannel(ByteChannel channel, OobRole role,
                                       std::optional<Psk> psk = std::nullopt) {
  ChannelOptions o;
  o.name = "test socket";
  o.role = role;
  o.psk = std::move(psk);
  auto x = CreateChannelExchanger(std::move(channel), std::move(o));
  EXPECT_TRUE(x) << x.error().ToString();
  return std::move(*x);
}

// `c` with its description frame (type 2) held back for `delay` before it
// is sent: the peer waits for it meanwhile.
ByteChannel DelayingDescription(ByteChannel c, std::chrono::milliseconds delay) {
  c.send = [send = std::move(c.send), delay](std::string_view bytes,
                                             Clock::time_point deadline) -> Result<void> {
    if (bytes.size() > 5 && bytes[5] == 2) std::this_thread::sleep_for(delay);
    return send(bytes, deadline);
  };
  return c;
}

// Runs `call` (a wait of `x`) on another thread, cancels `x` after `after`
// (or sets `flag` when given), and checks the call ends within kPrompt of
// that as a cancellation, naming `want_detail`.
template <typename Call>
void ExpectStoppedPromptly(Exchanger& x, Call call, std::chrono::milliseconds after,
                           std::atomic<bool>* flag = nullptr,
                           const std::string& want_detail = std::string("cancelled: ") + kReason) {
  auto pending = std::async(std::launch::async, call);
  std::this_thread::sleep_for(after);
  const auto stopped_at = Clock::now();
  if (flag != nullptr) {
    flag->store(true);
  } else {
    x.Cancel(kReason);
  }
  const Error e = pending.get();
  EXPECT_LT(Clock::now() - stopped_at, kPrompt);
  EXPECT_TRUE(IsCancelled(e)) << e.ToString();
  EXPECT_NE(e.code, ErrorCode::kTimeout);
  EXPECT_NE(e.detail.find(want_detail), std::string::npos) << e.ToString();
}

Error ErrorOf(const Result<EndpointInfo>& r) { return r ? Error{} : r.error(); }
Error ErrorOf(const Result<void>& r) { return r ? Error{} : r.error(); }

void ExpectPeerAborted(const Error& e, const std::string& reason = kReason) {
  EXPECT_EQ(e.code, ErrorCode::kProtocol) << e.ToString();
  EXPECT_NE(e.detail.find("the peer aborted: " + reason), std::string::npos) << e.ToString();
}

// What the peer's exchange ends with: its error, or, once it got our
// description (it was still sending its own when we stopped), its barrier's.
Error ExchangeThenBarrier(Exchanger& x) {
  auto r = x.Exchange(MakeEndpoint("c", 1), 10s);
  if (!r) return r.error();
  return ErrorOf(x.Barrier("rts", 1s));
}

// A tcp server and client that have exchanged descriptions.
struct Exchanged {
  Exchanged() {
    auto fs =
        std::async(std::launch::async, [&] { return server->Exchange(MakeEndpoint("s", 1), 5s); });
    EXPECT_TRUE(client->Exchange(MakeEndpoint("c", 1), 5s));
    EXPECT_TRUE(fs.get());
  }
  std::unique_ptr<TcpExchanger> server = LoopbackServer();
  std::unique_ptr<TcpExchanger> client = LoopbackClient(server->port());
};

// Stops `server` in `call` after 200 ms: with Cancel(kReason) when `flag`
// is null, else by setting the interrupt flag, then (qp-connect --serve's
// way) Abort(kReason) while it is still set, and clearing it.
template <typename Call>
void StopServer(TcpExchanger& server, Call call, std::atomic<bool>* flag) {
  ExpectStoppedPromptly(server, call, 200ms, flag,
                        flag == nullptr ? std::string("cancelled: ") + kReason
                                        : "interrupted (the process-wide interrupt flag is set)");
  if (flag == nullptr) return;
  server.Abort(kReason, 2s);
  flag->store(false);
}

// (a) The server has accepted and sent its hello; the client's hello has
// not come. The server is stopped: the client, exchanging only then, reads
// the server's hello and its early abort.
void StopWaitingForTheHello(std::atomic<bool>* flag) {
  auto server = LoopbackServer();
  int fd = ConnectTo(server->port());
  StopServer(
      *server, [&] { return ErrorOf(server->Exchange(MakeEndpoint("s", 1), 30s)); }, flag);
  auto client = OverChannel(SocketChannel(fd), OobRole::kClient);
  const auto started = Clock::now();
  ExpectPeerAborted(ErrorOf(client->Exchange(MakeEndpoint("c", 1), 10s)));
  EXPECT_LT(Clock::now() - started, kPrompt);
  CloseFd(fd);
}

// (b) The hellos are through; the client's description is held back. The
// server is stopped while it waits for it: the client's exchange fails with
// the reason, or, when the server's description came first (nonce order),
// its barrier does, at once. Four runs: either nonce order.
void StopWaitingForTheDescription(std::atomic<bool>* flag) {
  for (int run = 0; run < 4; ++run) {
    auto server = LoopbackServer();
    int fd = ConnectTo(server->port());
    auto client = OverChannel(DelayingDescription(SocketChannel(fd), 600ms), OobRole::kClient);
    auto fc = std::async(std::launch::async, [&] { return ExchangeThenBarrier(*client); });
    StopServer(
        *server, [&] { return ErrorOf(server->Exchange(MakeEndpoint("s", 1), 30s)); }, flag);
    ExpectPeerAborted(fc.get());
    CloseFd(fd);
  }
}

// (c) Both exchanged; the server waits in the barrier, the client comes to
// it only after the server was stopped: the client's barrier fails with the
// reason, although the server's barrier message came first.
void StopInTheBarrier(std::atomic<bool>* flag) {
  Exchanged x;
  StopServer(
      *x.server, [&] { return ErrorOf(x.server->Barrier("rts", 30s)); }, flag);
  ExpectPeerAborted(ErrorOf(x.client->Barrier("rts", 5s)));
}

TEST(CancelExchange, PeerLearnsWhyWhenCancelledWaitingForTheHello) {
  StopWaitingForTheHello(nullptr);
}

TEST(CancelExchange, PeerLearnsWhyWhenCancelledWaitingForTheDescription) {
  StopWaitingForTheDescription(nullptr);
}

TEST(CancelExchange, PeerLearnsWhyWhenCancelledInTheBarrier) { StopInTheBarrier(nullptr); }

// qp-connect --serve's way: the process-wide flag stops the wait (the
// channel stays open) and the caller's Abort() then tells the peer, in each
// of the three places.
TEST(CancelExchange, InterruptFlagThenAbortTellsThePeerInEachPlace) {
  std::atomic<bool> flag{false};
  SetInterruptFlag(&flag);
  StopWaitingForTheHello(&flag);
  StopWaitingForTheDescription(&flag);
  StopInTheBarrier(&flag);
  SetInterruptFlag(nullptr);
}

// (a) with a PSK: nothing is sent in clear but the fact, before a key is
// agreed.
TEST(CancelExchange, PeerLearnsOfTheAbortBeforeTheKeyConfirmationWithoutItsReason) {
  auto server = LoopbackServer(Key("k"));
  int fd = ConnectTo(server->port());
  ExpectStoppedPromptly(
      *server, [&] { return ErrorOf(server->Exchange(MakeEndpoint("s", 1), 30s)); }, 200ms);
  auto client = OverChannel(SocketChannel(fd), OobRole::kClient, Key("k"));
  const Error e = ErrorOf(client->Exchange(MakeEndpoint("c", 1), 10s));
  EXPECT_EQ(e.code, ErrorCode::kProtocol) << e.ToString();
  EXPECT_NE(e.detail.find("the peer aborted before the key confirmation"), std::string::npos)
      << e.ToString();
  EXPECT_EQ(e.detail.find(kReason), std::string::npos) << e.ToString();
  CloseFd(fd);
}

// A caller's blocking channel: Cancel() reaches a wait inside its receive()
// (the driver gives it at most 100 ms at a time), and the peer is told.
TEST(CancelExchange, CancelReachesAWaitInsideACallersBlockingReceive) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto a = OverChannel(SocketChannel(fds[0]), OobRole::kServer);
  auto b = OverChannel(DelayingDescription(SocketChannel(fds[1]), 600ms), OobRole::kClient);
  auto fb = std::async(std::launch::async, [&] { return ExchangeThenBarrier(*b); });
  ExpectStoppedPromptly(
      *a, [&] { return ErrorOf(a->Exchange(MakeEndpoint("a", 1), 30s)); }, 200ms);
  ExpectPeerAborted(fb.get());
  CloseFd(fds[0]);
  CloseFd(fds[1]);
}

// Cancel() is final: the next call fails at once, before anything is sent.
TEST(CancelExchange, CancelBeforeTheCallFailsItAtOnceAndSendsNothing) {
  auto server = LoopbackServer();
  server->Cancel("shutting down");
  int fd = ConnectTo(server->port());
  const auto started = Clock::now();
  auto r = server->Exchange(MakeEndpoint("s", 1), 30s);
  EXPECT_LT(Clock::now() - started, 100ms);
  ASSERT_FALSE(r);
  EXPECT_TRUE(IsCancelled(r.error())) << r.error().ToString();
  EXPECT_NE(r.error().detail.find("cancelled: shutting down"), std::string::npos);
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 100), 0) << "the server sent something";
  CloseFd(fd);
}

// During traffic: PollPeer() reports the cancel (and keeps reporting it),
// and the peer's PollPeer() sees the reason.
TEST(CancelExchange, PollPeerReportsTheCancelAndThePeerSeesTheReason) {
  Exchanged x;
  auto& server = x.server;
  auto& client = x.client;
  EXPECT_TRUE(server->PollPeer());
  server->Cancel(kReason);
  for (int i = 0; i < 2; ++i) {
    auto p = server->PollPeer();
    ASSERT_FALSE(p);
    EXPECT_TRUE(IsCancelled(p.error())) << p.error().ToString();
  }
  Result<void> seen = Ok();
  for (int i = 0; i < 50 && seen; ++i) {
    seen = client->PollPeer();
    if (seen) std::this_thread::sleep_for(20ms);
  }
  ExpectPeerAborted(ErrorOf(seen));
}

// Files: Cancel() ends the wait for the peer's file within poll_interval
// (100 ms) and leaves the abort file for the peer.
TEST(CancelExchange, CancelEndsAFileWaitAndLeavesTheAbortForThePeer) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("qpc-cancel-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto make = [&](const char* role, const char* peer) {
    FileOptions o;
    o.directory = dir;
    o.session = "job";
    o.role = role;
    o.peer_role = peer;
    o.use_inotify = false;
    auto x = FileExchanger::Create(std::move(o));
    EXPECT_TRUE(x) << x.error().ToString();
    return std::move(*x);
  };
  auto a = make("a", "b");
  auto b = make("b", "a");
  auto fa = std::async(std::launch::async, [&] { return a->Exchange(MakeEndpoint("a", 1), 10s); });
  ASSERT_TRUE(b->Exchange(MakeEndpoint("b", 1), 10s));
  ASSERT_TRUE(fa.get());
  ExpectStoppedPromptly(
      *a, [&] { return ErrorOf(a->Barrier("rts", 30s)); }, 200ms);
  ExpectPeerAborted(ErrorOf(b->Barrier("rts", 10s)));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qpconnect::oob
