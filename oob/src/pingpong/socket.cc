// SPDX-License-Identifier: MIT
// The pingpong dialect's TCP steps (qpconnect/oob/pingpong.h) on Boost.Asio:
// every wait is bounded by the caller's deadline with the helper every other
// out-of-band channel uses (exchange/asio_deadline.h). A wait that expires
// cancels the operation; the socket stays for the caller to destroy.
#include <boost/asio/ip/v6_only.hpp>

#include <string>
#include <thread>

#include "exchange/asio_deadline.h"
#include "qpconnect/oob/pingpong.h"

namespace qpconnect::oob {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using internal::AsioError;
using internal::EndpointText;
using Clock = PingpongClock;

struct PingpongServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  tcp::socket conn{io};
};

struct PingpongClient::Impl {
  asio::io_context io;
  tcp::socket socket{io};
};

namespace {

// What an expired wait does: cancel what is outstanding on `s`.
template <typename Socket>
auto Cancelling(Socket& s) {
  return [&s] {
    error_code ignored;
    s.cancel(ignored);
  };
}

void Close(tcp::socket& s) {
  error_code ignored;
  s.close(ignored);
}

// Reads exactly `n` bytes. A peer that closes early is kProtocol; a deadline
// that passes is kTimeout; both say how many bytes had arrived.
Result<std::string> ReadExact(asio::io_context& io, tcp::socket& s, size_t n,
                              Clock::time_point deadline, const std::string& what) {
  std::string buf(n, '\0');
  const auto r = internal::ReadBefore(io, s, buf.data(), n, internal::ReadMode::kExactly, deadline,
                                      Cancelling(s));
  const std::string got = std::to_string(r.bytes) + " of " + std::to_string(n) + " bytes";
  if (!r.in_time) {
    Error e{ErrorCode::kTimeout, 0, what, "", "the deadline passed with " + got + " received"};
    if (r.bytes > 0 && r.bytes != n) {
      e.detail +=
          " (is the peer a pingpong program? perftest and qp-connect --wire qpc "
          "speak other formats)";
    }
    return e;
  }
  if (r.ec == asio::error::eof) {
    return Error{ErrorCode::kProtocol, 0, what, "length",
                 "the peer closed the connection after " + got};
  }
  if (r.ec) return AsioError(ErrorCode::kIo, r.ec, what, "");
  return buf;
}

Result<void> WriteAll(asio::io_context& io, tcp::socket& s, std::string_view data,
                      Clock::time_point deadline, const std::string& what) {
  // Asio sends with MSG_NOSIGNAL: a closed peer is EPIPE, not SIGPIPE.
  const auto w = internal::WriteAllBefore(io, s, data, deadline, Cancelling(s));
  if (!w.in_time) return Error{ErrorCode::kTimeout, 0, what, "", "the deadline passed"};
  if (w.ec) {
    const bool closed = w.ec == asio::error::broken_pipe || w.ec == asio::error::connection_reset;
    return AsioError(ErrorCode::kIo, w.ec, what, closed ? "the peer closed the connection" : "");
  }
  return Ok();
}

// The listening addresses of `host` (empty: any) for `port`, as the stock
// server's getaddrinfo(AI_PASSIVE).
Result<std::vector<tcp::endpoint>> ResolvePassive(asio::io_context& io, const std::string& host,
                                                  uint16_t port) {
  const std::string h = internal::Unbracket(host);
  const std::string service = std::to_string(port);
  tcp::resolver resolver(io);
  error_code ec;
  auto results = resolver.resolve(h, service, tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Error{ErrorCode::kNotFound, 0, "resolve " + (h.empty() ? "*" : h) + ":" + service, "",
                 ec ? ec.message() : "no address"};
  }
  std::vector<tcp::endpoint> eps;
  for (const auto& r : results) eps.push_back(r.endpoint());
  return eps;
}

}  // namespace

// ---- server ----

Result<std::unique_ptr<PingpongServer>> PingpongServer::Create(
    const PingpongServerOptions& options) {
  std::unique_ptr<PingpongServer> s(new PingpongServer());
  s->impl_ = std::make_unique<Impl>();
  tcp::acceptor& acceptor = s->impl_->acceptor;
  auto eps = ResolvePassive(s->impl_->io, options.bind_address, options.port);
  if (!eps) return std::move(eps).error();
  Error last{ErrorCode::kIo, 0, "listen on port " + std::to_string(options.port), "",
             "no usable address"};
  // Prefer IPv6 (dual-stack) where available, then the resolver's order.
  for (int pass = 0; pass < 2 && !acceptor.is_open(); ++pass) {
    for (const tcp::endpoint& ep : *eps) {
      if ((pass == 0) != ep.address().is_v6()) continue;
      error_code ec;
      acceptor.open(ep.protocol(), ec);
      if (ec) {
        last = AsioError(ErrorCode::kIo, ec, "socket", "");
        continue;
      }
      acceptor.set_option(asio::socket_base::reuse_address(true), ec);
      if (ep.address().is_v6()) acceptor.set_option(asio::ip::v6_only(false), ec);
      ec.clear();
      acceptor.bind(ep, ec);
      if (!ec) acceptor.listen(1, ec);
      if (ec) {
        last = AsioError(ErrorCode::kIo, ec, "bind/listen " + EndpointText(ep), "");
        error_code ignored;
        acceptor.close(ignored);
        continue;
      }
      break;
    }
  }
  if (!acceptor.is_open()) return last;
  error_code ignored;
  s->port_ = acceptor.local_endpoint(ignored).port();
  return s;
}

PingpongServer::~PingpongServer() = default;

Result<PingpongRecord> PingpongServer::AcceptAndReadPeer(Clock::time_point deadline) {
  const std::string what = "accept a pingpong client on port " + std::to_string(port_);
  Impl& im = *impl_;
  if (!im.conn.is_open()) {
    if (!im.acceptor.is_open()) {
      return Error{ErrorCode::kInvalidArgument, 0, what, "", "the listener is closed"};
    }
    const auto a =
        internal::AcceptBefore(im.io, im.acceptor, im.conn, deadline, Cancelling(im.acceptor));
    if (!a.in_time) {
      return Error{ErrorCode::kTimeout, 0, what, "", "no client connected before the deadline"};
    }
    if (a.ec) return AsioError(ErrorCode::kIo, a.ec, what, "");
    error_code ignored;
    peer_ = EndpointText(im.conn.remote_endpoint(ignored));
    im.acceptor.close(ignored);  // one client, as the stock server
  }
  auto rec = ReadExact(im.io, im.conn, kPingpongRecordBytes, deadline,
                       "read the client's pingpong record from " + peer_);
  if (!rec) return std::move(rec).error();
  return DecodePingpongRecord(*rec);
}

Result<void> PingpongServer::SendOwn(const PingpongRecord& own, Clock::time_point deadline) {
  if (!impl_->conn.is_open()) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong send", "", "no client"};
  }
  return WriteAll(impl_->io, impl_->conn, EncodePingpongRecord(own), deadline,
                  "write our pingpong record to " + peer_);
}

Result<void> PingpongServer::ReadDone(Clock::time_point deadline) {
  if (!impl_->conn.is_open()) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong done", "", "no client"};
  }
  auto d = ReadExact(impl_->io, impl_->conn, kPingpongDoneBytes, deadline,
                     "read \"done\" from " + peer_);
  if (!d) return std::move(d).error();
  if (*d != std::string_view("done\0", kPingpongDoneBytes)) {
    return Error{ErrorCode::kProtocol, 0, "read \"done\" from " + peer_, "done",
                 "the client sent 5 bytes that are not \"done\\0\""};
  }
  Close(impl_->conn);
  return Ok();
}

// ---- client ----

PingpongClient::PingpongClient(PingpongClientOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {}

Result<std::unique_ptr<PingpongClient>> PingpongClient::Create(
    const PingpongClientOptions& options) {
  if (options.host.empty()) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong client", "host", "empty host"};
  }
  if (options.retry_interval.count() < 0) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong client", "retry_interval", "negative"};
  }
  return std::unique_ptr<PingpongClient>(new PingpongClient(options));
}

PingpongClient::~PingpongClient() = default;

Result<void> PingpongClient::Connect(Clock::time_point deadline) {
  const std::string target = options_.host + ":" + std::to_string(options_.port);
  auto eps = internal::ResolveBefore(options_.host, options_.port, deadline);
  if (!eps) return std::move(eps).error();
  Impl& im = *impl_;
  int attempts = 0;
  for (;;) {
    ++attempts;
    Close(im.socket);
    tcp::endpoint connected;
    const auto c = internal::ConnectBefore(im.io, im.socket, *eps, deadline, &connected,
                                           Cancelling(im.socket));
    if (!c.in_time) {
      Close(im.socket);
      return Error{ErrorCode::kTimeout, 0, "connect " + target, "", "the deadline passed"};
    }
    if (!c.ec) return Ok();
    Close(im.socket);
    const bool refused = c.ec == asio::error::connection_refused;
    if (!refused || options_.retry_interval.count() == 0 ||
        Clock::now() + options_.retry_interval >= deadline) {
      return AsioError(ErrorCode::kIo, c.ec, "connect " + target,
                       refused && attempts > 1
                           ? "still refused after " + std::to_string(attempts) +
                                 " attempts: is the server (ibv_*_pingpong without HOST) running?"
                           : "");
    }
    std::this_thread::sleep_for(options_.retry_interval);  // ends before the deadline
  }
}

Result<void> PingpongClient::SendOwn(const PingpongRecord& own, Clock::time_point deadline) {
  if (!impl_->socket.is_open()) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong send", "", "not connected"};
  }
  return WriteAll(impl_->io, impl_->socket, EncodePingpongRecord(own), deadline,
                  "write our pingpong record");
}

Result<PingpongRecord> PingpongClient::ReadPeer(Clock::time_point deadline) {
  if (!impl_->socket.is_open()) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong read", "", "not connected"};
  }
  auto rec = ReadExact(impl_->io, impl_->socket, kPingpongRecordBytes, deadline,
                       "read the server's pingpong record");
  if (!rec) return std::move(rec).error();
  return DecodePingpongRecord(*rec);
}

Result<void> PingpongClient::SendDone(Clock::time_point deadline) {
  if (!impl_->socket.is_open()) {
    return Error{ErrorCode::kInvalidArgument, 0, "pingpong done", "", "not connected"};
  }
  QPC_TRY(WriteAll(impl_->io, impl_->socket, std::string_view("done\0", kPingpongDoneBytes),
                   deadline, "write \"done\""));
  Close(impl_->socket);
  return Ok();
}

}  // namespace qpconnect::oob
