#include "qpconnect/oob/tcp.h"

#include <sys/socket.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "driver.h"

namespace qpconnect::oob {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using internal::MakeError;
using internal::MsText;

namespace {

std::string EndpointText(const tcp::endpoint& ep) {
  const auto addr = ep.address();
  std::string a = addr.to_string();
  if (addr.is_v6()) a = "[" + a + "]";
  return a + ":" + std::to_string(ep.port());
}

Error AsioError(ErrorCode code, const error_code& ec, std::string operation, std::string detail) {
  Error e;
  e.code = code;
  if (ec.category() == boost::system::system_category() ||
      ec.category() == boost::asio::error::get_system_category()) {
    e.sys_errno = ec.value();
  }
  e.operation = std::move(operation);
  e.detail = std::move(detail);
  if (e.sys_errno == 0) {
    if (!e.detail.empty()) e.detail += ": ";
    e.detail += ec.message();
  }
  return e;
}

// Host names are resolved on a detached thread so that a slow resolver cannot
// hold the exchange past its deadline (getaddrinfo cannot be cancelled).
struct ResolveState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  error_code ec;
  std::vector<tcp::endpoint> endpoints;
};

}  // namespace

// A transport of the protocol driver: connection setup (listen, accept,
// resolve, connect with retries) and a ByteChannel over the socket; the
// driver does the rest, exactly as for a caller's own channel (channel.h).
class TcpExchanger::Impl final : public internal::StreamPort {
 public:
  Impl(bool server, internal::DriverOptions options)
      : internal::StreamPort(SocketChannel(this), "tcp"),
        server_(server),
        driver_(std::move(options)) {}

  Result<void> Listen(const TcpServerOptions& o);
  Result<EndpointInfo> Exchange(const EndpointInfo& local, Clock::time_point deadline);
  Result<void> Barrier(std::string_view stage, Clock::time_point deadline);
  void Abort(std::string_view reason, Clock::time_point deadline);
  Result<void> PollPeer() { return driver_.PollPeer(*this); }
  const ExchangeStats& stats() const { return driver_.stats(); }
  void Close();

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

  // Runs the io_context until `done()` or `deadline`. On expiry cancels
  // everything outstanding, drains the handlers and returns false.
  template <typename Done>
  bool Run(Clock::time_point deadline, Done done);
  void CancelAll();
  void CloseSocket();

  Result<void> Accept(Clock::time_point deadline, Clock::duration total);
  Result<void> Connect(Clock::time_point deadline, Clock::duration total);
  Result<std::vector<tcp::endpoint>> Resolve(Clock::time_point deadline);

  asio::io_context io_;
  std::optional<tcp::acceptor> acceptor_;
  tcp::socket socket_{io_};
  asio::steady_timer timer_{io_};
  internal::ProtocolDriver driver_;
};

template <typename Done>
bool TcpExchanger::Impl::Run(Clock::time_point deadline, Done done) {
  io_.restart();
  const auto now = Clock::now();
  if (deadline > now) io_.run_for(deadline - now);
  if (done()) {
    io_.run();  // let any last handler of a finished step run
    return true;
  }
  CancelAll();
  io_.run();
  return false;
}

void TcpExchanger::Impl::CancelAll() {
  error_code ignored;
  if (acceptor_) acceptor_.value().cancel(ignored);
  timer_.cancel();
  CloseSocket();
}

void TcpExchanger::Impl::CloseSocket() {
  error_code ignored;
  if (socket_.is_open()) socket_.close(ignored);
  driver_.Forget();
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
    std::string host = o.bind_address;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
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
  bool done = false;
  error_code ec;
  acceptor_->async_accept(socket_, [&](const error_code& e) {
    ec = e;
    done = true;
  });
  if (!Run(deadline, [&] { return done; })) {
    return MakeError(ErrorCode::kTimeout, "accept on port " + std::to_string(port_),
                     "no client connected within " + MsText(total));
  }
  if (ec) return AsioError(ErrorCode::kIo, ec, "accept on port " + std::to_string(port_), "");
  error_code ignored;
  peer_ = EndpointText(socket_.remote_endpoint(ignored));
  socket_.set_option(tcp::no_delay(true), ignored);
  return Ok();
}

Result<std::vector<tcp::endpoint>> TcpExchanger::Impl::Resolve(Clock::time_point deadline) {
  std::string host = host_;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  error_code ec;
  const auto addr = asio::ip::make_address(host, ec);
  if (!ec) return std::vector<tcp::endpoint>{tcp::endpoint(addr, port_)};

  auto state = std::make_shared<ResolveState>();
  const std::string service = std::to_string(port_);
  std::thread([state, host, service] {
    asio::io_context io;
    tcp::resolver resolver(io);
    error_code rec;
    auto results = resolver.resolve(host, service, rec);
    std::vector<tcp::endpoint> eps;
    for (const auto& r : results) eps.push_back(r.endpoint());
    std::lock_guard<std::mutex> lock(state->mu);
    state->ec = rec;
    state->endpoints = std::move(eps);
    state->done = true;
    state->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(state->mu);
  if (!state->cv.wait_until(lock, deadline, [&] { return state->done; })) {
    return MakeError(ErrorCode::kTimeout, "resolve " + host,
                     "the resolver did not answer before the deadline");
  }
  if (state->ec || state->endpoints.empty()) {
    return MakeError(ErrorCode::kNotFound, "resolve " + host,
                     state->ec ? state->ec.message() : "no address");
  }
  return state->endpoints;
}

Result<void> TcpExchanger::Impl::Connect(Clock::time_point deadline, Clock::duration total) {
  auto endpoints = Resolve(deadline);
  if (!endpoints) return std::move(endpoints).error();
  const std::string target = host_ + " port " + std::to_string(port_);
  int attempts = 0;
  for (;;) {
    ++attempts;
    CloseSocket();
    socket_ = tcp::socket(io_);
    bool done = false;
    error_code ec;
    tcp::endpoint connected;
    asio::async_connect(socket_, *endpoints, [&](const error_code& e, const tcp::endpoint& ep) {
      ec = e;
      connected = ep;
      done = true;
    });
    if (!Run(deadline, [&] { return done; })) {
      return MakeError(ErrorCode::kTimeout, "connect to " + target,
                       "no connection within " + MsText(total) + " (" + std::to_string(attempts) +
                           " attempt" + (attempts == 1 ? "" : "s") + ")");
    }
    if (!ec) {
      error_code ignored;
      peer_ = EndpointText(connected);
      socket_.set_option(tcp::no_delay(true), ignored);
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
  bool done = false;
  error_code ec;
  size_t written = 0;
  asio::async_write(socket_, asio::buffer(bytes.data(), bytes.size()),
                    [&](const error_code& e, size_t n) {
                      ec = e;
                      written = n;
                      done = true;
                    });
  const bool finished = Run(deadline, [&] { return done; });
  // After Run() the handler has run, on expiry too: `written` is final.
  const std::string progress =
      std::to_string(written) + " of " + std::to_string(bytes.size()) + " bytes sent";
  if (!finished) return MakeError(ErrorCode::kTimeout, "", progress);
  if (ec) return AsioError(ErrorCode::kIo, ec, "", progress);
  return Ok();
}

Result<size_t> TcpExchanger::Impl::ReceiveBytes(char* buf, size_t max_bytes,
                                                Clock::time_point deadline) {
  if (!socket_.is_open()) return MakeError(ErrorCode::kIo, "", "not connected");
  // What is there already, without the io_context: this answers a poll (a
  // deadline that has passed, PollPeer()) without closing the socket, as an
  // expired Run() would.
  for (;;) {
    const ssize_t n = ::recv(socket_.native_handle(), buf, max_bytes, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return size_t{0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    if (errno == ECONNRESET) {
      return ErrnoError(ErrorCode::kIo, ECONNRESET, "", "the peer reset the connection");
    }
    return ErrnoError(ErrorCode::kIo, errno, "", "");
  }
  if (Clock::now() >= deadline) return MakeError(ErrorCode::kTimeout, "", "");
  bool done = false;
  error_code ec;
  size_t got = 0;
  socket_.async_read_some(asio::buffer(buf, max_bytes), [&](const error_code& e, size_t n) {
    ec = e;
    got = n;
    done = true;
  });
  if (!Run(deadline, [&] { return done; })) return MakeError(ErrorCode::kTimeout, "", "");
  if (ec == asio::error::eof) return size_t{0};
  if (ec == asio::error::connection_reset) {
    // A peer that exits with our data unread resets instead of closing.
    return ErrnoError(ErrorCode::kIo, ECONNRESET, "", "the peer reset the connection");
  }
  if (ec) return AsioError(ErrorCode::kIo, ec, "", "");
  return got;
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

Result<EndpointInfo> TcpExchanger::Impl::Exchange(const EndpointInfo& local,
                                                  Clock::time_point deadline) {
  auto result = driver_.Exchange(*this, local, deadline);
  if (!result) {
    CloseSocket();
    return result;
  }
  if (server_ && !persistent_ && acceptor_) {
    error_code ignored;
    acceptor_->close(ignored);
  }
  return result;
}

Result<void> TcpExchanger::Impl::Barrier(std::string_view stage, Clock::time_point deadline) {
  auto result = driver_.Barrier(*this, stage, deadline);
  if (!result && result.error().code != ErrorCode::kInvalidArgument) CloseSocket();
  return result;
}

void TcpExchanger::Impl::Abort(std::string_view reason, Clock::time_point deadline) {
  driver_.Abort(*this, reason, deadline);
  Close();
}

TcpExchanger::TcpExchanger(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TcpExchanger::~TcpExchanger() {
  if (impl_) impl_->Close();
}

Result<std::unique_ptr<TcpExchanger>> TcpExchanger::CreateServer(TcpServerOptions options) {
  QPC_TRY(internal::CheckPayloadCap(options.max_payload_bytes, "tcp exchanger options"));
  if (options.handshake_timeout.count() <= 0 || options.max_rejected_clients == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp exchanger options",
                     "handshake_timeout and max_rejected_clients must be positive");
  }
  internal::DriverOptions d;
  d.psk = std::move(options.psk);
  d.role = OobRole::kServer;
  d.max_payload_bytes = options.max_payload_bytes;
  d.max_peer_qps = options.max_peer_qps;
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
  internal::DriverOptions d;
  d.psk = std::move(options.psk);
  d.role = OobRole::kClient;
  d.max_payload_bytes = options.max_payload_bytes;
  d.max_peer_qps = options.max_peer_qps;
  auto impl = std::make_unique<Impl>(false, std::move(d));
  impl->host_ = options.host;
  impl->port_ = options.port;
  impl->retry_interval_ = options.retry_interval;
  return std::unique_ptr<TcpExchanger>(new TcpExchanger(std::move(impl)));
}

Result<EndpointInfo> TcpExchanger::Exchange(const EndpointInfo& local,
                                            std::chrono::milliseconds deadline) {
  return impl_->Exchange(local, Clock::now() + deadline);
}

Result<void> TcpExchanger::Barrier(std::string_view stage, std::chrono::milliseconds deadline) {
  return impl_->Barrier(stage, Clock::now() + deadline);
}

void TcpExchanger::Abort(std::string_view reason, std::chrono::milliseconds deadline) {
  impl_->Abort(reason, Clock::now() + deadline);
}

Result<void> TcpExchanger::PollPeer() { return impl_->PollPeer(); }

ExchangeStats TcpExchanger::stats() const { return impl_->stats(); }

void TcpExchanger::Close() { impl_->Close(); }

uint16_t TcpExchanger::port() const { return impl_->port_; }

std::string TcpExchanger::peer_address() const { return impl_->peer_; }

}  // namespace qpconnect::oob
