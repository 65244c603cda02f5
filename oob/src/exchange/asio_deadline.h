// SPDX-License-Identifier: MIT
// Deadline-bounded Boost.Asio I/O, written once for every out-of-band
// channel: the tcp exchanger, the stdio exchanger and the pingpong dialect's
// socket (docs/oob.md, "Deadlines"). It is Asio's blocking_tcp_client idiom
// (docs/style.md §4), which works on Asio 1.18: start the asynchronous
// operation, run the io_context until it has finished or the deadline has
// passed, and on expiry cancel (or close) what is outstanding and run the
// handlers to completion, so no handler outlives the buffers it writes to.
// Private to oob/src.
//
// Thread-safety: one thread at a time per io_context.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/oob/interrupt.h"
#include "qpconnect/result.h"
#include "stop.h"

namespace qpconnect::oob::internal {

using Clock = std::chrono::steady_clock;

// Runs the handlers of `io` until `done()` is true or `deadline` passes; a
// deadline already past still runs the handlers that are ready. Returns true
// once done() holds. On expiry calls `expire()`, which must cancel or close
// every operation still outstanding on `io`, runs their handlers to
// completion and returns false. A done() that only becomes true in those
// handlers still counts as expiry. A stop (stop.h: the exchanger's Cancel(),
// the process-wide interrupt flag) counts as the deadline passing: the wait
// looks at it at least every kInterruptPoll; `expire()` may ask
// StopRequested() to tell the two apart.
template <typename Done, typename Expire>
bool RunUntil(boost::asio::io_context& io, Clock::time_point deadline, Done done, Expire expire) {
  io.restart();
  while (!done()) {
    if (io.poll_one() != 0) continue;  // a handler that was ready
    if (io.stopped() || Clock::now() >= deadline || StopRequested()) break;
    io.run_one_until(std::min(deadline, Clock::now() + kInterruptPoll));
  }
  if (done()) return true;
  expire();
  io.restart();
  io.run();
  return false;
}

// What one bounded operation did. `in_time` is false when the deadline passed
// first; `bytes` is final in every case (what was moved before an error, the
// end of stream or the expiry).
struct IoOutcome {
  bool in_time = false;
  boost::system::error_code ec;
  size_t bytes = 0;
};

// Runs one operation that `start(handler)` begins, handler(ec, bytes), until
// it completes or `deadline` passes; on expiry `expire()` as for RunUntil().
template <typename Start, typename Expire>
IoOutcome RunOneBefore(boost::asio::io_context& io, Clock::time_point deadline, Start start,
                       Expire expire) {
  IoOutcome out;
  bool done = false;
  start([&](const boost::system::error_code& ec, size_t n) {
    out.ec = ec;
    out.bytes = n;
    done = true;
  });
  out.in_time = RunUntil(
      io, deadline, [&] { return done; }, expire);
  return out;
}

// Writes all of `bytes` to `stream` (a socket or a stream_descriptor of
// `io`) before `deadline`.
template <typename Stream, typename Expire>
IoOutcome WriteAllBefore(boost::asio::io_context& io, Stream& stream, std::string_view bytes,
                         Clock::time_point deadline, Expire expire) {
  return RunOneBefore(
      io, deadline,
      [&](auto handler) {
        boost::asio::async_write(stream, boost::asio::buffer(bytes.data(), bytes.size()), handler);
      },
      expire);
}

// How much a read waits for: what is there (at least one byte), or exactly
// the buffer's size.
enum class ReadMode { kSome, kExactly };

// Reads into `buf` (`n` bytes at most, or exactly with kExactly) before
// `deadline`. The end of stream is ec == boost::asio::error::eof; `bytes`
// says how many came before it, an error or the expiry.
template <typename Stream, typename Expire>
IoOutcome ReadBefore(boost::asio::io_context& io, Stream& stream, char* buf, size_t n,
                     ReadMode mode, Clock::time_point deadline, Expire expire) {
  return RunOneBefore(
      io, deadline,
      [&](auto handler) {
        if (mode == ReadMode::kExactly) {
          boost::asio::async_read(stream, boost::asio::buffer(buf, n), handler);
        } else {
          stream.async_read_some(boost::asio::buffer(buf, n), handler);
        }
      },
      expire);
}

// Connects `socket` to the first of `endpoints` that accepts before
// `deadline`; `connected` is set to it.
template <typename Expire>
IoOutcome ConnectBefore(boost::asio::io_context& io, boost::asio::ip::tcp::socket& socket,
                        const std::vector<boost::asio::ip::tcp::endpoint>& endpoints,
                        Clock::time_point deadline, boost::asio::ip::tcp::endpoint* connected,
                        Expire expire) {
  return RunOneBefore(
      io, deadline,
      [&](auto handler) {
        boost::asio::async_connect(socket, endpoints,
                                   [handler, connected](const boost::system::error_code& ec,
                                                        const boost::asio::ip::tcp::endpoint& ep) {
                                     *connected = ep;
                                     handler(ec, 0);
                                   });
      },
      expire);
}

// Accepts one connection on `acceptor` into `socket` before `deadline`.
template <typename Expire>
IoOutcome AcceptBefore(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor& acceptor,
                       boost::asio::ip::tcp::socket& socket, Clock::time_point deadline,
                       Expire expire) {
  return RunOneBefore(
      io, deadline,
      [&](auto handler) {
        acceptor.async_accept(socket,
                              [handler](const boost::system::error_code& ec) { handler(ec, 0); });
      },
      expire);
}

// An Error of `code` for an Asio error_code: the errno value kept when the
// error is a system one, else its message appended to `detail`.
Error AsioError(ErrorCode code, const boost::system::error_code& ec, std::string operation,
                std::string detail);

// "10.0.0.7:18515", "[fe80::1]:18515".
std::string EndpointText(const boost::asio::ip::tcp::endpoint& ep);

// "[v6addr]" -> "v6addr"; other names unchanged.
std::string Unbracket(std::string host);

// The addresses of `host` (a name or a numeric address, possibly in
// brackets) for `port`. A numeric address needs no resolver; a name is
// resolved on a detached thread, so a slow resolver cannot hold the caller
// past `deadline` (getaddrinfo cannot be cancelled). kTimeout when the
// resolver has not answered by then, kNotFound when the name does not
// resolve (the resolver's message in the detail).
Result<std::vector<boost::asio::ip::tcp::endpoint>> ResolveBefore(const std::string& host,
                                                                  uint16_t port,
                                                                  Clock::time_point deadline);

}  // namespace qpconnect::oob::internal
