// SPDX-License-Identifier: MIT
#include "qpconnect/oob/tcp.h"

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cerrno>
#include <vector>

#include "asio_deadline.h"
#include "driver.h"
#include "transport.h"

namespace qpconnect::oob {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using internal::AsioError;
using internal::EndpointText;
using internal::MakeError;
using internal::MsText;

// A transport of the protocol driver: connection setup (listen, accept,
// resolve, connect with retries) and a ByteChannel over the socket; the
// driver does the rest, exactly as for a caller's own channel (channel.h).
class TcpExchanger::Impl final : public internal::StreamPort, public internal::Transport {
 public:
  Impl(bool server, internal::DriverOptions options)
      : internal::StreamPort(SocketChannel(this), "tcp"),
        Transport(*this, std::move(options)),
        server_(server) {}
  ~Impl() override { Close(); }

  Result<void> Listen(const TcpServerOptions& o);
  void Close();

  // Transport: the driver's calls; the connection closed after a failure
  // (not after a stop: it stays for the abort) and after Abort().
  Result<void> Prepare(Clock::time_point deadline) override;
  Result<EndpointInfo> Exchange(const EndpointInfo& local, Clock::time_point deadline) override;
  Result<void> Barrier(std::string_view stage, Clock::time_point deadline) override;
  Result<std::string> BarrierWithNote(std::string_view stage, std::string_view note,
                                      Clock::time_point deadline) override;
  void Abort(std::string_view reason, Clock::time_point deadline) override;
  std::vector<Gid> Addresses() const override { return ends_; }

  // FramePort: each Exchange() starts on a new connection; a server drops a
  // client that fails before it proved itself and accepts the next.
  Result<void> Open(const internal::Step& step) override;
  bool AcceptsAnotherPeer() const override { return server_; }

  bool server_;
  bool persistent_ = false;
  std::string host_;
  uint16_t port_ = 0;
  std::chrono::milliseconds retry_interval_{0};
  std::string peer_;

 private:
  // The ByteChannel the driver reads and writes: the socket of `self`, each
  // call bounded by its deadline.
  static ByteChannel SocketChannel(Impl* self);
  Result<void> SendBytes(std::string_view bytes, Clock::time_point deadline);
  Result<size_t> ReceiveBytes(char* buf, size_t max_bytes, Clock::time_point deadline);

  // Runs the io_context until `done()` or `deadline` (asio_deadline.h); on
  // expiry Expire() cancels the listener and closes the socket. A stop
  // (Cancel(), the interrupt flag) only cancels: the connection stays for
  // the abort that tells the peer why.
  template <typename Done>
  bool Run(Clock::time_point deadline, Done done);
  auto Expire() {
    return [this] {
      if (internal::StopRequested()) {
        CancelOperations();
      } else {
        CancelAll();
      }
    };
  }
  void CancelAll();
  void CancelOperations();
  void CloseSocket();

  Result<void> Accept(Clock::time_point deadline, Clock::duration total);
  Result<void> Connect(Clock::time_point deadline, Clock::duration total);

  // The connection's two ends as GIDs (Addresses()), set once connected.
  void NoteEnds() {
    error_code ignored;
    ends_ = {AddressGid(socket_.local_endpoint(ignored).address()),
             AddressGid(socket_.remote_endpoint(ignored).address())};
  }
  static Gid AddressGid(const asio::ip::address& a) {
    Gid g{};
    if (a.is_v4()) {
      g[10] = g[11] = 0xff;
      const auto b = a.to_v4().to_bytes();
      std::copy(b.begin(), b.end(), g.begin() + 12);
    } else {
      const auto b = a.to_v6().to_bytes();
      std::copy(b.begin(), b.end(), g.begin());
    }
    return g;
  }
  std::vector<Gid> ends_;

  asio::io_context io_;
  std::optional<tcp::acceptor> acceptor_;
  tcp::socket socket_{io_};
  asio::steady_timer timer_{io_};
};

template <typename Done>
bool TcpExchanger::Impl::Run(Clock::time_point deadline, Done done) {
  return internal::RunUntil(io_, deadline, done, Expire());
}

void TcpExchanger::Impl::CancelAll() {
  error_code ignored;
  if (acceptor_) acceptor_.value().cancel(ignored);
  timer_.cancel();
  CloseSocket();
}

void TcpExchanger::Impl::CancelOperations() {
  error_code ignored;
  if (acceptor_) acceptor_.value().cancel(ignored);
  timer_.cancel();
  if (socket_.is_open()) socket_.cancel(ignored);
}

void TcpExchanger::Impl::CloseSocket() {
  error_code ignored;
  if (socket_.is_open()) socket_.close(ignored);
  driver().Forget();
}

void TcpExchanger::Impl::Close() {
  error_code ignored;
  if (socket_.is_open()) socket_.shutdown(tcp::socket::shutdown_both, ignored);
  CloseSocket();
}

Result<void> TcpExchanger::Impl::Listen(const TcpServerOptions& o) {
  persistent_ = o.persistent;
  tcp::endpoint ep;
  const bool any = o.bind_address.empty();
  if (any) {
    ep = tcp::endpoint(tcp::v6(), o.port);
  } else {
    const std::string host = internal::Unbracket(o.bind_address);
    error_code ec;
    const auto addr = asio::ip::make_address(host, ec);
    if (!ec) {
      ep = tcp::endpoint(addr, o.port);
    } else {
      tcp::resolver resolver(io_);
      auto results = resolver.resolve(host, std::to_string(o.port), tcp::resolver::passive, ec);
      if (ec || results.empty()) {
        return MakeError(ErrorCode::kNotFound, "resolve bind address " + host,
                         ec ? ec.message() : "no address");
      }
      ep = results.begin()->endpoint();
    }
  }
  error_code ec;
  acceptor_.emplace(io_);
  acceptor_->open(ep.protocol(), ec);
  if (ec && any) {  // no IPv6 on this host: IPv4 only
    ep = tcp::endpoint(tcp::v4(), o.port);
    ec.clear();
    acceptor_->open(ep.protocol(), ec);
  }
  if (ec) return AsioError(ErrorCode::kIo, ec, "open listener " + EndpointText(ep), "");
  acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
  if (any && ep.address().is_v6()) acceptor_->set_option(asio::ip::v6_only(false), ec);
  acceptor_->bind(ep, ec);
  if (ec) return AsioError(ErrorCode::kIo, ec, "bind " + EndpointText(ep), "");
  acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return AsioError(ErrorCode::kIo, ec, "listen on " + EndpointText(ep), "");
  port_ = acceptor_->local_endpoint(ec).port();
  host_ = EndpointText(acceptor_->local_endpoint(ec));
  return Ok();
}

Result<void> TcpExchanger::Impl::Accept(Clock::time_point deadline, Clock::duration total) {
  if (!acceptor_ || !acceptor_->is_open()) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp server on port " + std::to_string(port_),
                     "the listener is closed (a non-persistent server serves one client)");
  }
  socket_ = tcp::socket(io_);
  const auto accepted = internal::AcceptBefore(io_, *acceptor_, socket_, deadline, Expire());
  if (!accepted.in_time) {
    return MakeError(ErrorCode::kTimeout, "accept on port " + std::to_string(port_),
                     "no client connected within " + MsText(total));
  }
  const error_code& ec = accepted.ec;
  if (ec) return AsioError(ErrorCode::kIo, ec, "accept on port " + std::to_string(port_), "");
  error_code ignored;
  peer_ = EndpointText(socket_.remote_endpoint(ignored));
  socket_.set_option(tcp::no_delay(true), ignored);
  NoteEnds();
  return Ok();
}

Result<void> TcpExchanger::Impl::Connect(Clock::time_point deadline, Clock::duration total) {
  auto endpoints = internal::ResolveBefore(host_, port_, deadline);
  if (!endpoints) return std::move(endpoints).error();
  const std::string target = host_ + " port " + std::to_string(port_);
  int attempts = 0;
  for (;;) {
    ++attempts;
    CloseSocket();
    socket_ = tcp::socket(io_);
    tcp::endpoint connected;
    const auto outcome =
        internal::ConnectBefore(io_, socket_, *endpoints, deadline, &connected, Expire());
    if (!outcome.in_time) {
      return MakeError(ErrorCode::kTimeout, "connect to " + target,
                       "no connection within " + MsText(total) + " (" + std::to_string(attempts) +
                           " attempt" + (attempts == 1 ? "" : "s") + ")");
    }
    const error_code& ec = outcome.ec;
    if (!ec) {
      error_code ignored;
      peer_ = EndpointText(connected);
      socket_.set_option(tcp::no_delay(true), ignored);
      NoteEnds();
      return Ok();
    }
    const bool refused = ec == asio::error::connection_refused;
    if (!refused || retry_interval_.count() <= 0 || Clock::now() + retry_interval_ >= deadline) {
      return AsioError(ErrorCode::kIo, ec, "connect to " + target,
                       refused && attempts > 1
                           ? "still refused after " + std::to_string(attempts) + " attempts"
                           : "");
    }
    bool waited = false;
    timer_.expires_after(retry_interval_);
    timer_.async_wait([&](const error_code&) { waited = true; });
    if (!Run(deadline, [&] { return waited; })) {
      return MakeError(ErrorCode::kTimeout, "connect to " + target,
                       "connection refused until the deadline");
    }
  }
}

ByteChannel TcpExchanger::Impl::SocketChannel(Impl* self) {
  ByteChannel c;
  c.send = [self](std::string_view bytes, Clock::time_point deadline) {
    return self->SendBytes(bytes, deadline);
  };
  c.receive = [self](char* buf, size_t max_bytes, Clock::time_point deadline) {
    return self->ReceiveBytes(buf, max_bytes, deadline);
  };
  return c;
}

Result<void> TcpExchanger::Impl::SendBytes(std::string_view bytes, Clock::time_point deadline) {
  if (!socket_.is_open()) return MakeError(ErrorCode::kIo, "", "not connected");
  const auto sent = internal::WriteAllBefore(io_, socket_, bytes, deadline, Expire());
  // The handler has run, on expiry too: `sent.bytes` is final.
  const std::string progress =
      std::to_string(sent.bytes) + " of " + std::to_string(bytes.size()) + " bytes sent";
  if (!sent.in_time) return MakeError(ErrorCode::kTimeout, "", progress);
  if (sent.ec) return AsioError(ErrorCode::kIo, sent.ec, "", progress);
  return Ok();
}

Result<size_t> TcpExchanger::Impl::ReceiveBytes(char* buf, size_t max_bytes,
                                                Clock::time_point deadline) {
  if (!socket_.is_open()) return MakeError(ErrorCode::kIo, "", "not connected");
  // A deadline that has passed is a poll (PollPeer()): what is there
  // already, and the socket stays open (only cancelled), where an expired
  // wait closes it.
  internal::IoOutcome read;
  if (Clock::now() >= deadline) {
    read = internal::ReadBefore(io_, socket_, buf, max_bytes, internal::ReadMode::kSome, deadline,
                                [this] {
                                  error_code ignored;
                                  socket_.cancel(ignored);
                                });
  } else {
    read = internal::ReadBefore(io_, socket_, buf, max_bytes, internal::ReadMode::kSome, deadline,
                                Expire());
  }
  if (!read.in_time) return MakeError(ErrorCode::kTimeout, "", "");
  const error_code& ec = read.ec;
  if (ec == asio::error::eof) return size_t{0};
  if (ec == asio::error::connection_reset) {
    // A peer that exits with our data unread resets instead of closing.
    return ErrnoError(ErrorCode::kIo, ECONNRESET, "", "the peer reset the connection");
  }
  if (ec) return AsioError(ErrorCode::kIo, ec, "", "");
  return read.bytes;
}

Result<void> TcpExchanger::Impl::Open(const internal::Step& step) {
  Close();
  Reset();
  peer_.clear();
  if (server_) {
    QPC_TRY(Accept(step.deadline, step.total));
  } else {
    QPC_TRY(Connect(step.deadline, step.total));
  }
  set_name("tcp " + peer_);
  return Ok();
}

Result<void> TcpExchanger::Impl::Prepare(Clock::time_point deadline) {
  auto result = driver().Prepare(*this, deadline);
  // As Exchange(): a stopped greeting keeps the connection for Abort().
  if (!result && !IsCancelled(result.error())) CloseSocket();
  return result;
}

Result<EndpointInfo> TcpExchanger::Impl::Exchange(const EndpointInfo& local,
                                                  Clock::time_point deadline) {
  auto result = driver().Exchange(*this, local, deadline);
  if (!result) {
    // Stopped: the connection stays for the caller's Abort() (a Cancel()
    // has sent its own); the next Exchange() or Close() closes it.
    if (!IsCancelled(result.error())) CloseSocket();
    return result;
  }
  if (server_ && !persistent_ && acceptor_) {
    error_code ignored;
    acceptor_->close(ignored);
  }
  return result;
}

Result<void> TcpExchanger::Impl::Barrier(std::string_view stage, Clock::time_point deadline) {
  auto result = driver().Barrier(*this, stage, deadline);
  if (!result && result.error().code != ErrorCode::kInvalidArgument &&
      !IsCancelled(result.error())) {
    CloseSocket();
  }
  return result;
}

Result<std::string> TcpExchanger::Impl::BarrierWithNote(std::string_view stage,
                                                        std::string_view note,
                                                        Clock::time_point deadline) {
  auto result = driver().BarrierWithNote(*this, stage, note, deadline);
  if (!result && result.error().code != ErrorCode::kInvalidArgument &&
      !IsCancelled(result.error())) {
    CloseSocket();
  }
  return result;
}

void TcpExchanger::Impl::Abort(std::string_view reason, Clock::time_point deadline) {
  driver().Abort(*this, reason, deadline);
  Close();
}

TcpExchanger::TcpExchanger(std::unique_ptr<Impl> impl) : ProtocolExchanger(std::move(impl)) {}

TcpExchanger::Impl& TcpExchanger::impl() const { return static_cast<Impl&>(transport()); }

Result<std::unique_ptr<TcpExchanger>> TcpExchanger::CreateServer(TcpServerOptions options) {
  QPC_TRY(internal::CheckPayloadCap(options.max_payload_bytes, "tcp exchanger options"));
  if (options.handshake_timeout.count() <= 0 || options.max_rejected_clients == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp exchanger options",
                     "handshake_timeout and max_rejected_clients must be positive");
  }
  internal::DriverOptions d = internal::SharedDriverOptions(options);
  d.role = OobRole::kServer;
  d.peer_handshake_timeout = options.handshake_timeout;
  d.max_rejected_peers = options.max_rejected_clients;
  auto impl = std::make_unique<Impl>(true, std::move(d));
  QPC_TRY(impl->Listen(options));
  return std::unique_ptr<TcpExchanger>(new TcpExchanger(std::move(impl)));
}

Result<std::unique_ptr<TcpExchanger>> TcpExchanger::CreateClient(TcpClientOptions options) {
  QPC_TRY(internal::CheckPayloadCap(options.max_payload_bytes, "tcp exchanger options"));
  if (options.host.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp client", "no server host given");
  }
  if (options.port == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp client", "port 0 is not a server port");
  }
  if (options.retry_interval.count() < 0) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp client", "negative retry_interval");
  }
  internal::DriverOptions d = internal::SharedDriverOptions(options);
  d.role = OobRole::kClient;
  auto impl = std::make_unique<Impl>(false, std::move(d));
  impl->host_ = options.host;
  impl->port_ = options.port;
  impl->retry_interval_ = options.retry_interval;
  return std::unique_ptr<TcpExchanger>(new TcpExchanger(std::move(impl)));
}

void TcpExchanger::Close() { impl().Close(); }

uint16_t TcpExchanger::port() const { return impl().port_; }

std::string TcpExchanger::peer_address() const { return impl().peer_; }

}  // namespace qpconnect::oob
