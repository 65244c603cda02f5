// SPDX-License-Identifier: MIT
// The deadline-bounded Asio waits every out-of-band channel uses
// (oob/src/exchange/asio_deadline.h): a wait ends at its deadline with its
// handler run, a deadline already passed still takes what is there, and the
// expiry action decides whether the stream survives.
#include "asio_deadline.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace qpconnect::oob::internal {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Local = asio::local::stream_protocol;

struct SocketPair {
  SocketPair() { asio::local::connect_pair(a, b); }
  asio::io_context io;
  Local::socket a{io};
  Local::socket b{io};
};

auto Cancel(Local::socket& s) {
  return [&s] {
    boost::system::error_code ignored;
    s.cancel(ignored);
  };
}

TEST(AsioDeadline, ReadEndsAtTheDeadlineAndKeepsTheStreamWhenCancelled) {
  SocketPair p;
  char buf[16];
  const auto t0 = Clock::now();
  auto r =
      ReadBefore(p.io, p.a, buf, sizeof buf, ReadMode::kSome, Clock::now() + 100ms, Cancel(p.a));
  const auto took = Clock::now() - t0;
  EXPECT_FALSE(r.in_time);
  EXPECT_EQ(r.bytes, 0u);
  EXPECT_GE(took, 90ms);
  EXPECT_LT(took, 2s);
  ASSERT_TRUE(p.a.is_open());
  // The stream still works after a cancelled wait.
  asio::write(p.b, asio::buffer(std::string("hi")));
  auto r2 = ReadBefore(p.io, p.a, buf, 2, ReadMode::kExactly, Clock::now() + 1s, Cancel(p.a));
  EXPECT_TRUE(r2.in_time);
  EXPECT_FALSE(r2.ec);
  EXPECT_EQ(std::string(buf, r2.bytes), "hi");
}

TEST(AsioDeadline, ADeadlineAlreadyPassedStillTakesWhatIsThere) {
  SocketPair p;
  asio::write(p.b, asio::buffer(std::string("abc")));
  char buf[16];
  auto r = ReadBefore(p.io, p.a, buf, sizeof buf, ReadMode::kSome, Clock::now() - 1s, Cancel(p.a));
  EXPECT_TRUE(r.in_time);
  EXPECT_EQ(std::string(buf, r.bytes), "abc");
  // Nothing there: at once, not in time.
  const auto t0 = Clock::now();
  auto none =
      ReadBefore(p.io, p.a, buf, sizeof buf, ReadMode::kSome, Clock::now() - 1s, Cancel(p.a));
  EXPECT_FALSE(none.in_time);
  EXPECT_LT(Clock::now() - t0, 500ms);
}

TEST(AsioDeadline, AnExactReadSaysHowMuchCameBeforeTheEndOrTheDeadline) {
  SocketPair p;
  asio::write(p.b, asio::buffer(std::string("12345")));
  char buf[52];
  auto r =
      ReadBefore(p.io, p.a, buf, sizeof buf, ReadMode::kExactly, Clock::now() + 100ms, Cancel(p.a));
  EXPECT_FALSE(r.in_time);
  EXPECT_EQ(r.bytes, 5u);
  asio::write(p.b, asio::buffer(std::string("678")));
  p.b.close();
  auto e =
      ReadBefore(p.io, p.a, buf, sizeof buf, ReadMode::kExactly, Clock::now() + 1s, Cancel(p.a));
  EXPECT_TRUE(e.in_time);
  EXPECT_EQ(e.ec, asio::error::eof);
  EXPECT_EQ(e.bytes, 3u);
}

TEST(AsioDeadline, AWriteToAFullStreamEndsAtTheDeadlineWithItsProgress) {
  SocketPair p;
  const std::string big(8 << 20, 'x');  // far more than the socket buffers
  auto w = WriteAllBefore(p.io, p.a, big, Clock::now() + 100ms, Cancel(p.a));
  EXPECT_FALSE(w.in_time);
  EXPECT_GT(w.bytes, 0u);
  EXPECT_LT(w.bytes, big.size());
}

TEST(AsioDeadline, ResolvesANumericAddressWithoutTheResolver) {
  auto eps = ResolveBefore("[::1]", 7000, Clock::now() - 1s);  // no time needed
  ASSERT_TRUE(eps) << eps.error().ToString();
  ASSERT_EQ(eps->size(), 1u);
  EXPECT_EQ(EndpointText(eps->front()), "[::1]:7000");
}

// qp-connect --serve (issue 14): a signal handler sets the interrupt flag, and
// a wait whose deadline is an hour away ends as if it had passed (a broken
// check shows as this test hanging, not as a timing). The flag off again, a
// wait works as before.
TEST(AsioDeadline, TheInterruptFlagEndsAWaitAsItsDeadlineWould) {
  SocketPair p;
  std::atomic<bool> flag{false};
  SetInterruptFlag(&flag);
  EXPECT_FALSE(Interrupted());
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    flag.store(true);
  });
  char buf[16];
  auto r = ReadBefore(p.io, p.a, buf, sizeof buf, ReadMode::kSome, Clock::now() + 1h, Cancel(p.a));
  setter.join();
  EXPECT_TRUE(Interrupted());
  EXPECT_FALSE(r.in_time);
  EXPECT_EQ(r.bytes, 0u);
  flag.store(false);
  asio::write(p.b, asio::buffer(std::string("hi")));
  auto r2 = ReadBefore(p.io, p.a, buf, 2, ReadMode::kExactly, Clock::now() + 1h, Cancel(p.a));
  EXPECT_TRUE(r2.in_time);
  EXPECT_EQ(std::string(buf, r2.bytes), "hi");
  SetInterruptFlag(nullptr);
  flag.store(true);
  EXPECT_FALSE(Interrupted());  // no flag: never interrupted
}

}  // namespace
}  // namespace qpconnect::oob::internal
