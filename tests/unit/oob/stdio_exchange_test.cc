// SPDX-License-Identifier: MIT
// StdioExchanger over pipes: pairwise, batching, barrier, PSK (accept, wrong
// key, one side without key, replay, tamper through a relay) and hostile input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "exchange_samples.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/stdio.h"

namespace qpconnect::oob {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A pipe; both ends closed on destruction.
struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    CloseR();
    CloseW();
  }
  void CloseR() { CloseFd(r); }
  void CloseW() { CloseFd(w); }
  void Write(const std::string& s) const {
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::write(w, s.data() + off, s.size() - off);
      ASSERT_GT(n, 0);
      off += static_cast<size_t>(n);
    }
  }
  int r = -1;
  int w = -1;
};

// Reads lines from `from` and writes them, through `edit`, to `to`, until end
// of input; then closes `to`'s write end. Returns every line it saw.
std::future<std::vector<std::string>> Relay(Pipe& from, Pipe& to,
                                            std::function<std::string(int, std::string)> edit) {
  return std::async(std::launch::async, [&from, &to, edit] {
    std::vector<std::string> lines;
    std::string buf;
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::read(from.r, chunk, sizeof chunk);
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        std::string line = buf.substr(0, nl + 1);
        buf.erase(0, nl + 1);
        lines.push_back(line);
        to.Write(edit(static_cast<int>(lines.size() - 1), line));
      }
    }
    to.CloseW();
    return lines;
  });
}

// The description line of `e` as a peer without PSK sends it.
std::string PlainLine(const EndpointInfo& e) {
  Frame f;
  f.type = FrameType::kEndpoint;
  f.payload = EncodeBinary(e);
  return EncodeStdioLine(EncodeFrame(f));
}

class StdioPair : public ::testing::Test {
 protected:
  std::unique_ptr<StdioExchanger> Make(int in, int out, std::optional<Psk> psk = std::nullopt,
                                       uint32_t max_peer_qps = 0) {
    StdioOptions o;
    o.psk = std::move(psk);
    o.max_peer_qps = max_peer_qps;
    auto x = StdioExchanger::Create(in, out, std::move(o));
    EXPECT_TRUE(x);
    return std::move(*x);
  }
  Pipe ab_;  // a -> b
  Pipe ba_;  // b -> a
};

TEST_F(StdioPair, ExchangesOneQpEachWay) {
  auto a = Make(ba_.r, ab_.w);
  auto b = Make(ab_.r, ba_.w);
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 5s); });
  auto ra = a->Exchange(MakeEndpoint("a", 1), 5s);
  auto rb = fb.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(rb) << rb.error().ToString();
  EXPECT_EQ(*ra, MakeEndpoint("b", 1));
  EXPECT_EQ(*rb, MakeEndpoint("a", 1));
}

TEST_F(StdioPair, ExchangesTenThousandQpsWithoutDeadlockOnFullPipes) {
  // Each line is far larger than a pipe's 64 KiB buffer, and both sides
  // write first.
  auto a = Make(ba_.r, ab_.w, Key("k"));
  auto b = Make(ab_.r, ba_.w, Key("k"));
  const auto ea = MakeEndpoint("a", 10000);
  const auto eb = MakeEndpoint("b", 10000);
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(eb, 10s); });
  auto ra = a->Exchange(ea, 10s);
  auto rb = fb.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(rb) << rb.error().ToString();
  EXPECT_EQ(*ra, eb);
  EXPECT_EQ(*rb, ea);
}

TEST_F(StdioPair, BarrierPassesAndMismatchedStagesAreRefused) {
  auto a = Make(ba_.r, ab_.w, Key("k"));
  auto b = Make(ab_.r, ba_.w, Key("k"));
  ExpectBarrierPassesThenMismatchIsRefused(*a, *b, 2);
}

TEST_F(StdioPair, AbortReachesThePeersBarrier) {
  auto a = Make(ba_.r, ab_.w, Key("k"));
  auto b = Make(ab_.r, ba_.w, Key("k"));
  ExpectAbortReachesThePeersBarrier(*a, *b);
}

TEST_F(StdioPair, StageNamesMayHoldSpaces) {
  auto a = Make(ba_.r, ab_.w);
  auto b = Make(ab_.r, ba_.w);
  auto fb = std::async(std::launch::async, [&] {
    auto r = b->Exchange(MakeEndpoint("b", 1), 5s);
    if (!r) return r.error();
    auto bar = b->Barrier("rts", 5s);
    return bar ? Error{} : bar.error();
  });
  ASSERT_TRUE(a->Exchange(MakeEndpoint("a", 1), 5s));
  auto bar = a->Barrier("abort: validation failed", 5s);
  ASSERT_FALSE(bar);
  EXPECT_EQ(bar.error().code, ErrorCode::kProtocol);
  EXPECT_NE(fb.get().detail.find("'abort: validation failed'"), std::string::npos);
  EXPECT_EQ(a->Barrier("tab\there", 1s).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(StdioPair, BarrierBeforeExchangeIsRefused) {
  auto a = Make(ba_.r, ab_.w);
  auto r = a->Barrier("rtr", 100ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(StdioPair, WrongKeyIsRefusedWithAuthOnBothSides) {
  auto a = Make(ba_.r, ab_.w, Key("key-one"));
  auto b = Make(ab_.r, ba_.w, Key("key-two"));
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 5s); });
  auto ra = a->Exchange(MakeEndpoint("a", 1), 5s);
  auto rb = fb.get();
  ASSERT_FALSE(ra);
  ASSERT_FALSE(rb);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth);
  EXPECT_EQ(rb.error().code, ErrorCode::kAuth);
  EXPECT_NE(ra.error().detail.find("key confirmation failed"), std::string::npos)
      << ra.error().detail;
  EXPECT_NE(rb.error().detail.find("key confirmation failed"), std::string::npos)
      << rb.error().detail;
}

TEST_F(StdioPair, KeyOnOneSideOnlyIsRefusedWithAuthOnBothSides) {
  auto a = Make(ba_.r, ab_.w, Key("k"));
  auto b = Make(ab_.r, ba_.w);
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 5s); });
  auto ra = a->Exchange(MakeEndpoint("a", 1), 5s);
  auto rb = fb.get();
  ASSERT_FALSE(ra);
  ASSERT_FALSE(rb);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth) << ra.error().ToString();
  EXPECT_EQ(rb.error().code, ErrorCode::kAuth) << rb.error().ToString();
  EXPECT_NE(ra.error().detail.find("PSK configured on the peer"), std::string::npos)
      << ra.error().detail;
  EXPECT_NE(rb.error().detail.find("none is configured on this side"), std::string::npos)
      << rb.error().detail;
}

TEST_F(StdioPair, TamperedDescriptionIsRefused) {
  Pipe relay_out;  // b writes here; the relay forwards to a
  auto a = Make(ba_.r, ab_.w, Key("k"));
  auto b = Make(ab_.r, relay_out.w, Key("k"));
  auto relay = Relay(relay_out, ba_, [](int index, std::string line) {
    if (index == 2) {  // b's description: change one base64 character mid-line
      char& c = line[line.size() / 2];
      c = c == 'A' ? 'B' : 'A';
    }
    return line;
  });
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 4), 5s); });
  auto ra = a->Exchange(MakeEndpoint("a", 4), 5s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("altered"), std::string::npos);
  EXPECT_TRUE(fb.get());  // b received a's untouched description
  relay_out.CloseW();
  relay.get();
}

TEST_F(StdioPair, ReplayedSessionIsRefused) {
  // Session 1 is recorded by a relay between b and a.
  std::vector<std::string> recorded;
  {
    Pipe ab, ba, relay_out;
    auto a = Make(ba.r, ab.w, Key("k"));
    auto b = Make(ab.r, relay_out.w, Key("k"));
    auto relay = Relay(relay_out, ba, [](int, std::string line) { return line; });
    auto fb = std::async(std::launch::async, [&] { return b->Exchange(MakeEndpoint("b", 1), 5s); });
    ASSERT_TRUE(a->Exchange(MakeEndpoint("a", 1), 5s));
    ASSERT_TRUE(fb.get());
    b.reset();
    relay_out.CloseW();
    recorded = relay.get();
  }
  ASSERT_EQ(recorded.size(), 3u);  // hello, confirm, description
  // Session 2: an attacker plays b's recorded lines to a new a.
  Pipe in, out;
  auto a = Make(in.r, out.w, Key("k"));
  in.Write(recorded[0] + recorded[1] + recorded[2]);
  auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kAuth) << ra.error().ToString();
  EXPECT_NE(ra.error().detail.find("replayed"), std::string::npos) << ra.error().detail;
}

TEST_F(StdioPair, ToleratesNoiseLinesCrlfAndWhitespace) {
  auto a = Make(ba_.r, ab_.w);
  std::string line = PlainLine(MakeEndpoint("b", 3));
  line.pop_back();
  ba_.Write("Welcome to host b\r\n\r\nLast login: yesterday\n   \t" + line + "  \r\n");
  auto ra = a->Exchange(MakeEndpoint("a", 3), 2s);
  ASSERT_TRUE(ra) << ra.error().ToString();
  EXPECT_EQ(*ra, MakeEndpoint("b", 3));
}

TEST_F(StdioPair, AcceptsALastLineWithoutNewlineAtEndOfInput) {
  auto a = Make(ba_.r, ab_.w);
  std::string line = PlainLine(MakeEndpoint("b", 1));
  line.pop_back();
  ba_.Write(line);
  ba_.CloseW();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_TRUE(ra) << ra.error().ToString();
}

TEST_F(StdioPair, EndOfInputIsAClearIoError) {
  auto a = Make(ba_.r, ab_.w);
  ba_.Write("some banner\n");
  ba_.CloseW();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kIo);
  EXPECT_NE(ra.error().detail.find("end of input"), std::string::npos) << ra.error().detail;
  EXPECT_NE(ra.error().detail.find("some banner"), std::string::npos) << ra.error().detail;
}

TEST_F(StdioPair, GarbageLinesAreProtocolErrors) {
  struct Case {
    std::string input;
    ErrorCode code;
    const char* needle;
  };
  Frame big;
  big.type = FrameType::kEndpoint;
  std::string oversized = EncodeFrameHeader(FrameType::kEndpoint, 0, 0x7fffffff);
  std::string wrong_magic = std::string("PK\x03\x04") + std::string(20, 'x');
  Frame not_proto;
  not_proto.type = FrameType::kEndpoint;
  not_proto.payload = std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
  std::string wrong_version = EncodeFrame(not_proto);
  wrong_version[4] = 7;
  const Case cases[] = {
      {"qpc1:!!!not base64!!!\n", ErrorCode::kProtocol, "not base64url"},
      {"qpc1:" + std::string(40, 'A') + "\n", ErrorCode::kProtocol, "magic"},
      {"qpcgarbage\n", ErrorCode::kProtocol, "not a qpc1: line"},
      {"qpc9:AAAA\n", ErrorCode::kIncompatible, "qpc9"},
      {EncodeStdioLine(oversized), ErrorCode::kProtocol, "oversized"},
      {EncodeStdioLine(wrong_magic), ErrorCode::kProtocol, "not a qpconnect frame"},
      {EncodeStdioLine(wrong_version), ErrorCode::kIncompatible, "version"},
      {EncodeStdioLine(EncodeFrame(not_proto)), ErrorCode::kProtocol, "decode peer description"},
      {PlainLine(MakeEndpoint("b", 1)).substr(0, 30) + "\n", ErrorCode::kProtocol, "truncated"},
  };
  for (const auto& c : cases) {
    Pipe in, out;
    auto a = Make(in.r, out.w);
    in.Write(c.input);
    auto ra = a->Exchange(MakeEndpoint("a", 1), 2s);
    ASSERT_FALSE(ra) << c.input;
    EXPECT_EQ(ra.error().code, c.code) << ra.error().ToString();
    EXPECT_NE(ra.error().ToString().find(c.needle), std::string::npos)
        << c.needle << " not in " << ra.error().ToString();
  }
}

TEST_F(StdioPair, SilentPeerTimesOutWithinTheDeadline) {
  auto a = Make(ba_.r, ab_.w);
  const auto start = Clock::now();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 200ms);
  const auto took = Clock::now() - start;
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout);
  EXPECT_NE(ra.error().detail.find("no input"), std::string::npos) << ra.error().detail;
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 1s);
}

TEST_F(StdioPair, PeerStoppingMidLineTimesOutNamingThePartialLine) {
  auto a = Make(ba_.r, ab_.w);
  ba_.Write(PlainLine(MakeEndpoint("b", 1)).substr(0, 20));
  auto ra = a->Exchange(MakeEndpoint("a", 1), 200ms);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kTimeout);
  EXPECT_NE(ra.error().detail.find("did not complete"), std::string::npos) << ra.error().detail;
}

TEST_F(StdioPair, EndlessNoiseIsBounded) {
  StdioOptions o;
  o.max_skipped_bytes = 1000;
  auto a = StdioExchanger::Create(ba_.r, ab_.w, std::move(o));
  ASSERT_TRUE(a);
  ba_.Write(std::string(5000, 'x'));  // one long unterminated line of noise
  auto ra = (*a)->Exchange(MakeEndpoint("a", 1), 2s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kProtocol);
}

TEST_F(StdioPair, FloodOfEmptyLinesIsBoundedAndQuick) {
  StdioOptions o;
  o.max_skipped_bytes = 100000;
  auto a = StdioExchanger::Create(ba_.r, ab_.w, std::move(o));
  ASSERT_TRUE(a);
  auto writer = std::async(std::launch::async, [&] {
    const std::string newlines(1 << 16, '\n');
    ba_.Write(newlines);
    ba_.Write(newlines);
    ba_.CloseW();
  });
  const auto start = Clock::now();
  auto ra = (*a)->Exchange(MakeEndpoint("a", 1), 5s);
  EXPECT_FALSE(ra);  // no ASSERT before the drain below: the writer must finish
  if (!ra) {
    EXPECT_EQ(ra.error().code, ErrorCode::kProtocol) << ra.error().ToString();
  }
  EXPECT_LT(Clock::now() - start, 2s);
  char buf[4096];
  while (::read(ba_.r, buf, sizeof buf) > 0) {  // drain, so the writer never blocks
  }
  writer.get();
}

TEST_F(StdioPair, LongLineArrivingInSmallPiecesIsAccepted) {
  auto a = Make(ba_.r, ab_.w, std::nullopt, /*max_peer_qps=*/20000);
  const std::string line = PlainLine(MakeEndpoint("b", 20000));
  auto writer = std::async(std::launch::async, [&] {
    for (size_t off = 0; off < line.size(); off += 512) ba_.Write(line.substr(off, 512));
  });
  auto ra = a->Exchange(MakeEndpoint("a", 1), 5s);
  writer.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  EXPECT_EQ(ra->qps.size(), 20000u);
}

TEST_F(StdioPair, ClosedOutputIsAnIoErrorNotSigpipe) {
  auto a = Make(ba_.r, ab_.w);
  ab_.CloseR();
  auto ra = a->Exchange(MakeEndpoint("a", 1), 1s);
  ASSERT_FALSE(ra);
  EXPECT_EQ(ra.error().code, ErrorCode::kIo);
  EXPECT_EQ(ra.error().sys_errno, EPIPE);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
}

TEST_F(StdioPair, RestoresTheOutputDescriptorFlags) {
  auto a = Make(ba_.r, ab_.w);
  const int before = ::fcntl(ab_.w, F_GETFL);
  (void)a->Exchange(MakeEndpoint("a", 1), 50ms);
  EXPECT_EQ(::fcntl(ab_.w, F_GETFL), before);
}

// Asio waits on the caller's descriptors: it must neither close them nor leave
// them non-blocking, on input as on output.
TEST_F(StdioPair, LeavesTheCallersDescriptorsOpenWithTheirFlags) {
  const int in_before = ::fcntl(ba_.r, F_GETFL);
  const int out_before = ::fcntl(ab_.w, F_GETFL);
  {
    auto a = Make(ba_.r, ab_.w);
    (void)a->Exchange(MakeEndpoint("a", 1), 50ms);  // no peer: times out
    EXPECT_EQ(::fcntl(ba_.r, F_GETFL), in_before);
  }
  EXPECT_EQ(::fcntl(ba_.r, F_GETFL), in_before) << "input closed or left non-blocking";
  EXPECT_EQ(::fcntl(ab_.w, F_GETFL), out_before) << "output closed or left non-blocking";
  // Still usable: our line went into the pipe and can be read back.
  char buf[8] = {};
  ASSERT_EQ(::read(ab_.r, buf, 5), 5);
  EXPECT_EQ(std::string(buf, 5), "qpc1:");
}

// One descriptor both ways (a socket as stdin and stdout, as inetd or ssh
// give it): registered once with Asio, read and written at the same time.
TEST(StdioExchanger, ExchangesOverOneSocketBothWays) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  auto a = StdioExchanger::Create(sv[0], sv[0]);
  auto b = StdioExchanger::Create(sv[1], sv[1]);
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  const auto ea = MakeEndpoint("a", 5000);  // lines larger than the socket buffer
  const auto eb = MakeEndpoint("b", 5000);
  auto fb = std::async(std::launch::async, [&] { return (*b)->Exchange(eb, 10s); });
  auto ra = (*a)->Exchange(ea, 10s);
  auto rb = fb.get();
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(rb) << rb.error().ToString();
  EXPECT_EQ(*ra, eb);
  EXPECT_EQ(*rb, ea);
  a->reset();
  b->reset();
  EXPECT_EQ(::fcntl(sv[0], F_GETFD) >= 0 && ::fcntl(sv[1], F_GETFD) >= 0, true)
      << "the exchanger closed the caller's socket";
  ::close(sv[0]);
  ::close(sv[1]);
}

// A measurement, not a check (no doc quotes its figures): time and bytes of
// an exchange of up to 2^20 QPs; run with --gtest_also_run_disabled_tests.
TEST_F(StdioPair, DISABLED_MeasureMillionQps) {
  auto e = MakeEndpoint("x", 1u << 20);
  for (uint32_t i = 0; i < e.qps.size(); ++i) e.qps[i].qpn = (i * 2654435761u + 1) & kQpnMask;
  auto a = Make(ba_.r, ab_.w, Key("k"));
  auto b = Make(ab_.r, ba_.w, Key("k"));
  const auto start = Clock::now();
  auto fb = std::async(std::launch::async, [&] { return b->Exchange(e, 60s); });
  auto ra = a->Exchange(e, 60s);
  ASSERT_TRUE(ra) << ra.error().ToString();
  ASSERT_TRUE(fb.get());
  std::printf(
      "stdio: 2^20 QPs, line of %zu bytes, exchanged in %lld ms\n", PlainLine(e).size(),
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()));
}

TEST(StdioExchanger, RefusesBadDescriptorsAndCaps) {
  EXPECT_FALSE(StdioExchanger::Create(-1, 1));
  StdioOptions o;
  o.max_payload_bytes = 0;
  EXPECT_FALSE(StdioExchanger::Create(0, 1, std::move(o)));
}

}  // namespace
}  // namespace qpconnect::oob
