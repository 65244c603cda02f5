// SPDX-License-Identifier: MIT
// The exchanger over a caller-supplied ByteChannel (channel.h): two lambdas
// over a socketpair, a TCP socket or an in-memory queue. Pairwise exchange and
// barriers, interoperation with the tcp exchanger, PSK, the send order that
// keeps 20,000 QPs with MRs from deadlocking a blocking channel, a peer
// closing mid-frame, a hostile 4 GiB length, the deadline, abort, and
// callbacks that fail or throw.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "exchange_samples.h"
#include "qpconnect/oob/channel.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/tcp.h"
#include "socket_channel.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A connected pair of stream sockets.
struct SocketPair {
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    a = fds[0];
    b = fds[1];
  }
  ~SocketPair() {
    CloseFd(a);
    CloseFd(b);
  }
  void CloseB() { CloseFd(b); }
  // Bytes queued in the pair in one direction before a writer blocks.
  size_t Buffering() const {
    int snd = 0;
    int rcv = 0;
    socklen_t len = sizeof snd;
    ::getsockopt(a, SOL_SOCKET, SO_SNDBUF, &snd, &len);
    len = sizeof rcv;
    ::getsockopt(b, SOL_SOCKET, SO_RCVBUF, &rcv, &len);
    return static_cast<size_t>(snd) + static_cast<size_t>(rcv);
  }
  void Send(const std::string& s) const {
    ASSERT_EQ(::send(b, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  // One whole frame from b's side.
  std::string RecvFrame() const { return ReadFrame(b); }
  int a = -1;
  int b = -1;
};

std::unique_ptr<Exchanger> Make(ByteChannel channel, std::optional<Psk> psk = std::nullopt,
                                SendOrder order = SendOrder::kLowerNonceFirst,
                                std::string name = "test channel") {
  ChannelOptions o;
  o.name = std::move(name);
  o.psk = std::move(psk);
  o.order = order;
  auto x = CreateChannelExchanger(std::move(channel), std::move(o));
  EXPECT_TRUE(x) << x.error().ToString();
  return std::move(*x);
}

// `n` QPs with scattered 24-bit QPNs, each with an MR descriptor (scattered
// page-aligned addresses and rkeys, as a real registration gives).
EndpointInfo WithMrs(const std::string& host, uint32_t n) {
  EndpointInfo e = MakeEndpoint(host, n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t mix = (uint64_t{i} + 1) * 0x9e3779b97f4a7c15ULL;
    e.qps[i].qpn = (i * 2654435761u + 1) & kQpnMask;
    e.qps[i].mr = MrDescriptor{0x7f0000000000ULL + ((mix >> 20) & 0xffffffff000ULL),
                               static_cast<uint32_t>(mix >> 32), 1u << 21};
  }
  return e;
}

std::string HelloFrame(const Nonce& n) {
  Frame f;
  f.type = FrameType::kHello;
  f.payload.assign(n.begin(), n.end());
  return EncodeFrame(f);
}

// The description a keyless peer with nonce `sender` sends to the holder of
// `receiver_hello` (docs/oob.md: binding, then the codec's bytes).
std::string Description(const Nonce& sender, const std::string& receiver_hello,
                        const EndpointInfo& e) {
  Frame f;
  f.type = FrameType::kEndpoint;
  f.flags = kFrameFlagBound;
  f.payload.assign(sender.begin(), sender.end());
  f.payload += receiver_hello.substr(kFrameHeaderBytes, kNonceBytes);
  f.payload += std::string(4, '\0');
  f.payload += EncodeBinary(e);
  return EncodeFrame(f);
}

TEST(ChannelExchanger, ExchangesAndPassesBarriersOverTwoLambdas) {
  SocketPair pair;
  auto a = Make(SocketChannel(pair.a));
  auto b = Make(SocketChannel(pair.b));
  ExpectBarrierPassesThenMismatchIsRefused(*a, *b, 3);
}

// Exchanger::stats(): what one side sent is what the other received, frame
// by frame (hello, description, barrier), and the description frame is the
// codec's bytes plus the frame's header and binding.
TEST(ChannelExchanger, CountsTheFramesAndBytesEachWay) {
  using namespace std::chrono_literals;
  SocketPair pair;
  auto a = Make(SocketChannel(pair.a));
  auto b = Make(SocketChannel(pair.b));
  EXPECT_EQ(a->stats().frames_sent, 0u);
  const EndpointInfo ea = MakeEndpoint("a", 100);
  auto fb = std::async(std::launch::async, [&] {
    auto r = b->Exchange(MakeEndpoint("b-with-a-longer-name", 100), 5s);
    return r && b->Barrier("rts", 5s);
  });
  ASSERT_TRUE(a->Exchange(ea, 5s));
  ASSERT_TRUE(a->Barrier("rts", 5s));
  ASSERT_TRUE(fb.get());
  const ExchangeStats sa = a->stats();
  const ExchangeStats sb = b->stats();
  EXPECT_EQ(sa.frames_sent, 3u);
  EXPECT_EQ(sa.frames_received, 3u);
  EXPECT_EQ(sa.bytes_sent, sb.bytes_received);
  EXPECT_EQ(sb.bytes_sent, sa.bytes_received);
  // b's longer host name costs more; each side sends at least its encoded
  // description and three frame headers.
  EXPECT_GT(sb.bytes_sent, sa.bytes_sent);
  EXPECT_GE(sa.bytes_sent, EncodeBinary(ea).size() + 3 * kFrameHeaderBytes);
}

TEST(ChannelExchanger, TwentyThousandQpsWithMrsDoNotDeadlockABlockingChannel) {
  SocketPair pair;
  const auto ea = WithMrs("a", 20000);
  const auto eb = WithMrs("b", 20000);
  // Each description is several times what the pair buffers: were both
  // sides to send first, both would block in send() until the deadline.
  ASSERT_GT(EncodeBinary(ea).size(), pair.Buffering());
  auto a = Make(SocketChannel(pair.a), Key("k"));
  auto b = Make(SocketChannel(pair.b), Key("k"));
  const auto start = Clock::now();
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(eb, 20s); });
  auto ra = a->Exchange(ea, 20s);
  auto rb = fb.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(rb) << rb.error().ToString();
  EXPECT_EQ(*ra, eb);
  EXPECT_EQ(*rb, ea);
  EXPECT_LT(Clock::now() - start, 10s);
  auto fbar = std::async(std::launch::async, [&] { return b->Barrier("rtr", 5s); });
  EXPECT_TRUE(a->Barrier("rtr", 5s));
  EXPECT_TRUE(fbar.get());
}

TEST(ChannelExchanger, BothFirstOrderDeadlocksThatChannelUntilTheDeadline) {
  // The control for the test above: the same descriptions, both sides
  // sending first, block each other and time out. This is why
  // kLowerNonceFirst is the default.
  SocketPair pair;
  const auto e = WithMrs("x", 20000);
  auto a = Make(SocketChannel(pair.a), std::nullopt, SendOrder::kBothFirst);
  auto b = Make(SocketChannel(pair.b), std::nullopt, SendOrder::kBothFirst);
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(e, 500ms); });
  auto ra = a->Exchange(e, 500ms);
  auto rb = fb.get();
  ASSERT_FALSE(ra);
  ASSERT_FALSE(rb);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("did not take our"), std::string::npos) << ra.error().detail;
}

TEST(ChannelExchanger, BothFirstOrderWorksOverABufferedChannel) {
  // A mailbox-like channel (a key-value store, a queue): send() never waits
  // for the peer, so both may send first.
  struct Queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<char> bytes;
  };
  auto channel = [](Queue& out, Queue& in) {
    ByteChannel c;
    c.send = [&out](std::string_view bytes, Clock::time_point) -> Result<void> {
      std::lock_guard<std::mutex> lock(out.mu);
      out.bytes.insert(out.bytes.end(), bytes.begin(), bytes.end());
      out.cv.notify_all();
      return Ok();
    };
    c.receive = [&in](char* buf, size_t max, Clock::time_point deadline) -> Result<size_t> {
      std::unique_lock<std::mutex> lock(in.mu);
      if (!in.cv.wait_until(lock, deadline, [&] { return !in.bytes.empty(); })) {
        return MakeError(ErrorCode::kTimeout, "queue");
      }
      const size_t n = std::min(max, in.bytes.size());
      std::copy_n(in.bytes.begin(), n, buf);
      in.bytes.erase(in.bytes.begin(), in.bytes.begin() + static_cast<std::ptrdiff_t>(n));
      return n;
    };
    return c;
  };
  Queue ab;
  Queue ba;
  auto a = Make(channel(ab, ba), Key("k"), SendOrder::kBothFirst);
  auto b = Make(channel(ba, ab), Key("k"), SendOrder::kBothFirst);
  const auto e = WithMrs("q", 20000);
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(e, 10s); });
  auto ra = a->Exchange(e, 10s);
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(fb.get());
  EXPECT_EQ(*ra, e);
}

TEST(ChannelExchanger, SpeaksTheTcpExchangersProtocolByteForByte) {
  // A channel over a plain TCP socket talks to a real TcpExchanger server.
  TcpServerOptions so;
  so.bind_address = "127.0.0.1";
  so.port = 0;
  so.psk = Key("k");
  auto server = TcpExchanger::CreateServer(std::move(so));
  ASSERT_TRUE(server) << server.error().ToString();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((*server)->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto client = Make(SocketChannel(fd), Key("k"));
  const auto es = WithMrs("server", 5000);
  const auto ec = WithMrs("client", 5000);
  auto fs = std::async(std::launch::async, [&]() -> Result<EndpointInfo> {
    auto r = (*server)->Exchange(es, 5s);
    if (!r) return r;
    auto bar = (*server)->Barrier("rtr", 5s);
    if (!bar) return std::move(bar).error();
    return r;
  });
  auto rc = client->Exchange(ec, 5s);
  ASSERT_TRUE(rc) << rc.error().ToString();
  EXPECT_EQ(*rc, es);
  EXPECT_TRUE(client->Barrier("rtr", 5s));
  auto rs = fs.get();
  ASSERT_TRUE(rs) << rs.error().ToString();
  EXPECT_EQ(*rs, ec);
  CloseFd(fd);
}

TEST(ChannelExchanger, TheSideWithTheLowerNonceSendsItsDescriptionFirst) {
  for (uint8_t peer_byte : {uint8_t{0x00}, uint8_t{0xff}}) {
    SCOPED_TRACE(peer_byte == 0 ? "peer's nonce lowest" : "peer's nonce highest");
    SocketPair pair;
    auto x = Make(SocketChannel(pair.a));
    auto fx = std::async(std::launch::async, [&] { return x->Exchange(MakeEndpoint("x", 1), 5s); });
    Nonce peer{};
    peer.fill(peer_byte);
    const std::string x_hello = pair.RecvFrame();
    pair.Send(HelloFrame(peer));
    if (peer_byte == 0) {
      // We sort lower: x waits for our description before sending its own.
      EXPECT_FALSE(WaitFd(pair.b, POLLIN, Clock::now() + 200ms));
      pair.Send(Description(peer, x_hello, MakeEndpoint("peer", 1)));
      EXPECT_EQ(pair.RecvFrame()[5], static_cast<char>(FrameType::kEndpoint));
    } else {
      // x sorts lower: its description comes without ours.
      EXPECT_EQ(pair.RecvFrame()[5], static_cast<char>(FrameType::kEndpoint));
      pair.Send(Description(peer, x_hello, MakeEndpoint("peer", 1)));
    }
    auto rx = fx.get();
    ASSERT_TRUE(rx) << rx.error().ToString();
    EXPECT_EQ(rx->identity.host, "peer");
  }
}

TEST(ChannelExchanger, PskIsAcceptedAndAWrongKeyRefused) {
  for (bool same : {true, false}) {
    SCOPED_TRACE(same ? "same key" : "different keys");
    SocketPair pair;
    auto a = Make(SocketChannel(pair.a), Key("one"));
    auto b = Make(SocketChannel(pair.b), Key(same ? "one" : "two"));
    auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 2), 5s); });
    auto ra = a->Exchange(MakeEndpoint("a", 2), 5s);
    auto rb = fb.get();
    if (same) {
      ASSERT_TRUE(ra) << ra.error().ToString();
      ASSERT_TRUE(rb) << rb.error().ToString();
      EXPECT_EQ(*ra, MakeEndpoint("b", 2));
      continue;
    }
    // Both sides check the other's key confirmation, so both refuse it
    // themselves, before either sends its description.
    ASSERT_FALSE(ra);
    ASSERT_FALSE(rb);
    EXPECT_EQ(ra.error().code, ErrorCode::kAuth) << ra.error().ToString();
    EXPECT_EQ(rb.error().code, ErrorCode::kAuth) << rb.error().ToString();
    EXPECT_NE(ra.error().detail.find("key confirmation failed"), std::string::npos)
        << ra.error().detail;
    EXPECT_NE(rb.error().detail.find("key confirmation failed"), std::string::npos)
        << rb.error().detail;
  }
}

TEST(ChannelExchanger, PeerClosingMidFrameIsAnIoErrorNamingTheChannel) {
  SocketPair pair;
  auto a = Make(SocketChannel(pair.a), std::nullopt, SendOrder::kLowerNonceFirst, "mpi rank 3");
  pair.Send(HelloFrame(*RandomNonce()).substr(0, 7));
  pair.CloseB();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kIo) << ra.error().ToString();
  EXPECT_NE(ra.error().operation.find("mpi rank 3"), std::string::npos) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("mid-message: got 7 bytes of the 12-byte header of its hello "
                                   "frame"),
            std::string::npos)
      << ra.error().ToString();
}

TEST(ChannelExchanger, HostileFourGibLengthIsRefusedBeforeAnyAllocation) {
  SocketPair pair;
  size_t largest_ask = 0;
  size_t received = 0;
  ByteChannel counting = SocketChannel(pair.a);
  counting.receive = [&, inner = counting.receive](char* buf, size_t max,
                                                   Clock::time_point deadline) -> Result<size_t> {
    largest_ask = std::max(largest_ask, max);
    auto n = inner(buf, max, deadline);
    if (n) received += *n;
    return n;
  };
  auto a = Make(std::move(counting));
  pair.Send(EncodeFrameHeader(FrameType::kHello, 0, 0xffffffffu) + std::string(64, 'x'));
  auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kProtocol) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("oversized"), std::string::npos) << ra.error().detail;
  EXPECT_EQ(received, kFrameHeaderBytes);  // the header only: no body was asked for
  EXPECT_EQ(largest_ask, kFrameHeaderBytes);
}

TEST(ChannelExchanger, LengthUnderTheCapGrowsTheBufferOnlyAsBytesArrive) {
  SocketPair pair;
  size_t largest_ask = 0;
  ByteChannel counting = SocketChannel(pair.a);
  counting.receive = [&, inner = counting.receive](char* buf, size_t max,
                                                   Clock::time_point deadline) {
    largest_ask = std::max(largest_ask, max);
    return inner(buf, max, deadline);
  };
  ChannelOptions o;
  o.max_peer_qps = 1u << 18;  // a cap of 17 MiB by count: the 16 MiB frame cap applies
  auto a = CreateChannelExchanger(std::move(counting), std::move(o));
  ASSERT_TRUE(a);
  // After its hello (the lowest nonce: this side reads first), a description
  // announcing 15 MiB (under the cap), 100 bytes of it; then the peer goes.
  pair.Send(HelloFrame(Nonce{}) +
            EncodeFrameHeader(FrameType::kEndpoint, kFrameFlagBound, 15u << 20) +
            std::string(100, 'x'));
  auto peer = std::async(std::launch::async, [&] {
    pair.RecvFrame();  // our hello
    pair.CloseB();
  });
  auto ra = (*a)->Exchange(MakeEndpoint("a", 1), 2s);
  peer.get();
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kIo) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("got 112 of 15728652 bytes of its description frame"),
            std::string::npos)
      << ra.error().ToString();
  EXPECT_LE(largest_ask, size_t{1} << 20);
}

TEST(ChannelExchanger, SilentPeerTimesOutAtTheDeadline) {
  SocketPair pair;
  auto a = Make(SocketChannel(pair.a));
  const auto start = Clock::now();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 300ms);
  const auto took = Clock::now() - start;
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("the peer sent nothing within"), std::string::npos)
      << ra.error().detail;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 1s);
}

TEST(ChannelExchanger, DeadlineHoldsAgainstAPeerTricklingBytes) {
  // A receive() that returns one byte at a time, each just in time: the
  // exchanger checks the deadline itself between calls.
  SocketPair pair;
  ByteChannel slow = SocketChannel(pair.a);
  slow.receive = [inner = slow.receive](char* buf, size_t, Clock::time_point deadline) {
    std::this_thread::sleep_for(20ms);
    return inner(buf, 1, deadline);
  };
  auto a = Make(std::move(slow));
  pair.Send(std::string(EncodeFrameHeader(FrameType::kHello, 0, 2000)) + std::string(2000, 'x'));
  const auto start = Clock::now();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 300ms);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout) << ra.error().ToString();
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(ChannelExchanger, AbortReachesThePeer) {
  SocketPair pair;
  auto a = Make(SocketChannel(pair.a), Key("k"));
  auto b = Make(SocketChannel(pair.b), Key("k"));
  ExpectAbortReachesThePeersBarrier(*a, *b);
  // After an abort, a barrier needs a new exchange.
  EXPECT_EQ(a->Barrier("rtr", 100ms).error().code, ErrorCode::kInvalidArgument);
}

TEST(ChannelExchanger, AbortReachesThePeerEvenWhenTheChannelThenCloses) {
  // a aborts and closes its end before b's barrier: b's send fails (EPIPE),
  // and the abort waiting in b's receive buffer is what b reports.
  SocketPair pair;
  auto a = Make(SocketChannel(pair.a), Key("k"));
  auto b = Make(SocketChannel(pair.b), Key("k"));
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 5s); });
  ASSERT_TRUE(a->Exchange(MakeEndpoint("a", 1), 5s));
  ASSERT_TRUE(fb.get());
  a->Abort("ibv_modify_qp RTR failed", 1s);
  CloseFd(pair.a);
  auto bar = b->Barrier("rtr", 2s);
  ASSERT_FALSE(bar);
  EXPECT_EQ(bar.error().code, ErrorCode::kProtocol) << bar.error().ToString();
  EXPECT_NE(bar.error().detail.find("the peer aborted: ibv_modify_qp RTR failed"),
            std::string::npos)
      << bar.error().ToString();
}

TEST(ChannelExchanger, CallbackErrorsComeBackAsValues) {
  SocketPair pair;
  struct Case {
    const char* name;
    ByteChannel channel;
    ErrorCode code;
    const char* needle;
  };
  ByteChannel failing_send = SocketChannel(pair.a);
  failing_send.send = [](std::string_view, Clock::time_point) -> Result<void> {
    return ErrnoError(ErrorCode::kIo, ECONNABORTED, "MPI_Send", "communicator revoked");
  };
  ByteChannel failing_receive = SocketChannel(pair.a);
  failing_receive.receive = [](char*, size_t, Clock::time_point) -> Result<size_t> {
    return MakeError(ErrorCode::kNotFound, "kv get", "no such key: job-42/b");
  };
  ByteChannel throwing = SocketChannel(pair.a);
  throwing.send = [](std::string_view, Clock::time_point) -> Result<void> {
    throw std::runtime_error("rpc client shut down");
  };
  ByteChannel overfull = SocketChannel(pair.a);
  overfull.receive = [](char*, size_t max, Clock::time_point) -> Result<size_t> { return max + 1; };
  Case cases[] = {
      {"send fails", failing_send, ErrorCode::kIo, "communicator revoked"},
      {"receive fails", failing_receive, ErrorCode::kNotFound, "no such key"},
      {"send throws", throwing, ErrorCode::kIo, "threw an exception: rpc client shut down"},
      {"receive overfills", overfull, ErrorCode::kIo, "more than the 12 asked for"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto x = Make(std::move(c.channel), std::nullopt, SendOrder::kLowerNonceFirst, "job-42");
    Result<EndpointInfo> r = x->Exchange(MakeEndpoint("a", 1), 1s);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, c.code) << r.error().ToString();
    EXPECT_NE(r.error().ToString().find(c.needle), std::string::npos) << r.error().ToString();
    EXPECT_NE(r.error().operation.find("job-42"), std::string::npos) << r.error().ToString();
  }
}

TEST(ChannelExchanger, FactoryRefusesMissingFunctionsAndBadCaps) {
  ByteChannel no_receive;
  no_receive.send = [](std::string_view, Clock::time_point) { return Ok(); };
  auto r = CreateChannelExchanger(no_receive);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().detail.find("no receive"), std::string::npos);
  SocketPair pair;
  ChannelOptions tiny;
  tiny.max_payload_bytes = 1;
  EXPECT_EQ(CreateChannelExchanger(SocketChannel(pair.a), std::move(tiny)).error().code,
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace qpconnect::oob
