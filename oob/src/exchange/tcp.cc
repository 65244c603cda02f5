#include "qpconnect/oob/tcp.h"

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "session.h"

namespace qpconnect::oob {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using internal::MakeError;

namespace {

// Body bytes read per step: the buffer grows with the data that actually
// arrives, never to the announced length up front.
constexpr size_t kReadSlice = 1u << 20;

std::string EndpointText(const tcp::endpoint& ep) {
  const auto addr = ep.address();
  std::string a = addr.to_string();
  if (addr.is_v6()) a = "[" + a + "]";
  return a + ":" + std::to_string(ep.port());
}

std::string Ms(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
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

Result<void> CheckCap(uint32_t cap) {
  if (cap < 64 || cap > kMaxPayloadBytesLimit) {
    return MakeError(
        ErrorCode::kInvalidArgument, "tcp exchanger options",
        "max_payload_bytes must be between 64 and " + std::to_string(kMaxPayloadBytesLimit));
  }
  return Ok();
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

class TcpExchanger::Impl {
 public:
  Impl(bool server, std::optional<Psk> psk, uint32_t cap)
      : server_(server), session_(std::move(psk)), cap_(cap) {}

  Result<void> Listen(const TcpServerOptions& o);
  Result<EndpointInfo> Exchange(const EndpointInfo& local, Clock::time_point deadline);
  Result<void> Barrier(std::string_view stage, Clock::time_point deadline);
  void Abort(std::string_view reason, Clock::time_point deadline);
  void Close();

  bool server_;
  bool persistent_ = false;
  std::string host_;
  uint16_t port_ = 0;
  std::chrono::milliseconds retry_interval_{0};
  std::string peer_;

 private:
  // Runs the io_context until `done()` or `deadline`. On expiry cancels
  // everything outstanding, drains the handlers and returns false.
  // `on_expiry` runs before the cancellation, while the state still shows
  // what was outstanding.
  template <typename Done>
  bool Run(Clock::time_point deadline, Done done, const std::function<void()>& on_expiry = {});
  void CancelAll();
  void CloseSocket();

  Result<void> Accept(Clock::time_point deadline, Clock::duration total);
  Result<void> Connect(Clock::time_point deadline, Clock::duration total);
  Result<std::vector<tcp::endpoint>> Resolve(Clock::time_point deadline);
  // Sends `out` while receiving one frame; `what` names the expected message.
  Result<Frame> SendAndReceive(const std::string& out, const char* what, Clock::time_point deadline,
                               Clock::duration total);
  void StartReadHeader();
  void StartReadBody();
  void FinishRead(Result<Frame> r);
  Error ReadError(const error_code& ec, size_t got, size_t want) const;
  std::string Channel() const { return "tcp " + (peer_.empty() ? host_ : peer_); }

  asio::io_context io_;
  std::optional<tcp::acceptor> acceptor_;
  tcp::socket socket_{io_};
  asio::steady_timer timer_{io_};
  internal::Session session_;
  uint32_t cap_;
  bool exchanged_ = false;  // a successful Exchange() on the open connection
  uint32_t send_seq_ = 0;
  uint32_t recv_seq_ = 0;

  // State of the frame being read.
  const char* reading_ = "";
  std::array<char, kFrameHeaderBytes> header_buf_{};
  FrameHeader header_;
  std::string body_;
  size_t body_got_ = 0;
  size_t read_got_ = 0;  // header + body bytes received so far
  bool read_done_ = false;
  std::optional<Result<Frame>> read_result_;
};

template <typename Done>
bool TcpExchanger::Impl::Run(Clock::time_point deadline, Done done,
                             const std::function<void()>& on_expiry) {
  io_.restart();
  const auto now = Clock::now();
  if (deadline > now) io_.run_for(deadline - now);
  if (done()) {
    io_.run();  // let any last handler of a finished step run
    return true;
  }
  if (on_expiry) on_expiry();
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
  exchanged_ = false;
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
                     "no client connected within " + Ms(total));
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
                       "no connection within " + Ms(total) + " (" + std::to_string(attempts) +
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

Error TcpExchanger::Impl::ReadError(const error_code& ec, size_t got, size_t want) const {
  if (ec == asio::error::connection_reset) {
    // A peer that exits with our data unread resets instead of closing.
    Error e = MakeError(
        ErrorCode::kIo, "receive from " + Channel(),
        got == 0
            ? std::string("the peer reset the connection before sending its ") + reading_
            : std::string("the peer reset the connection mid-message: got ") + std::to_string(got) +
                  " of " + std::to_string(want) + " bytes of its " + reading_ + " frame");
    e.sys_errno = ECONNRESET;
    return e;
  }
  if (ec == asio::error::eof) {
    if (got == 0) {
      return MakeError(
          ErrorCode::kIo, "receive from " + Channel(),
          std::string("the peer closed the connection before sending its ") + reading_);
    }
    return MakeError(ErrorCode::kIo, "receive from " + Channel(),
                     std::string("the peer closed the connection mid-message: got ") +
                         std::to_string(got) + " of " + std::to_string(want) + " bytes of its " +
                         reading_ + " frame");
  }
  return AsioError(ErrorCode::kIo, ec, "receive from " + Channel(),
                   std::string("while reading its ") + reading_ + " (" + std::to_string(got) +
                       " bytes received)");
}

void TcpExchanger::Impl::FinishRead(Result<Frame> r) {
  read_result_.emplace(std::move(r));
  read_done_ = true;
  if (!read_result_->has_value()) CloseSocket();  // also cancels a pending send
}

void TcpExchanger::Impl::StartReadHeader() {
  asio::async_read(socket_, asio::buffer(header_buf_), [this](const error_code& ec, size_t n) {
    read_got_ = n;
    if (ec) {
      FinishRead(ReadError(ec, n, kFrameHeaderBytes));
      return;
    }
    auto h = DecodeFrameHeader(std::string_view(header_buf_.data(), header_buf_.size()), cap_);
    if (!h) {
      Error e = std::move(h).error();
      e.operation = "receive from " + Channel() + ": " + e.operation;
      FinishRead(std::move(e));
      return;
    }
    header_ = *h;
    body_.clear();
    body_got_ = 0;
    StartReadBody();
  });
}

void TcpExchanger::Impl::StartReadBody() {
  const size_t total = header_.BodyBytes();
  if (body_got_ == total) {
    Frame f;
    f.type = header_.type;
    f.flags = header_.flags;
    f.mac = body_.substr(header_.payload_bytes);
    body_.resize(header_.payload_bytes);
    f.payload = std::move(body_);
    FinishRead(std::move(f));
    return;
  }
  const size_t slice = std::min(kReadSlice, total - body_got_);
  body_.resize(body_got_ + slice);
  asio::async_read(socket_, asio::buffer(body_.data() + body_got_, slice),
                   [this, total](const error_code& ec, size_t n) {
                     body_got_ += n;
                     read_got_ = kFrameHeaderBytes + body_got_;
                     if (ec) {
                       FinishRead(ReadError(ec, read_got_, kFrameHeaderBytes + total));
                       return;
                     }
                     StartReadBody();
                   });
}

Result<Frame> TcpExchanger::Impl::SendAndReceive(const std::string& out, const char* what,
                                                 Clock::time_point deadline,
                                                 Clock::duration total) {
  reading_ = what;
  read_done_ = false;
  read_got_ = 0;
  read_result_.reset();
  bool write_done = false;
  error_code write_ec;
  size_t written = 0;
  asio::async_write(socket_, asio::buffer(out), [&](const error_code& ec, size_t n) {
    write_done = true;
    write_ec = ec;
    written = n;
    if (ec && !read_done_) CloseSocket();  // the read cannot succeed either
  });
  StartReadHeader();
  std::string detail;
  auto describe = [&] {
    if (!read_done_ && read_got_ == 0) {
      detail = std::string("the peer sent nothing within ") + Ms(total) + " (waiting for its " +
               what + ")";
    } else if (!read_done_) {
      detail = std::string("got ") + std::to_string(read_got_) + " bytes of the peer's " + what +
               " frame within " + Ms(total);
    } else {
      detail = "the peer did not take our " + std::to_string(out.size()) + "-byte message within " +
               Ms(total) + " (" + std::to_string(written) + " bytes sent)";
    }
  };
  if (!Run(
          deadline, [&] { return read_done_ && write_done; }, describe)) {
    return MakeError(ErrorCode::kTimeout, "exchange with " + Channel(), detail);
  }
  if (read_result_ && !read_result_->has_value()) {
    Result<Frame> r = std::move(*read_result_);
    return std::move(r).error();
  }
  if (write_ec) {
    CloseSocket();
    return AsioError(ErrorCode::kIo, write_ec, "send to " + Channel(),
                     std::to_string(written) + " of " + std::to_string(out.size()) + " bytes sent");
  }
  Result<Frame> r = std::move(*read_result_);
  return r;
}

Result<EndpointInfo> TcpExchanger::Impl::Exchange(const EndpointInfo& local,
                                                  Clock::time_point deadline) {
  const auto total = deadline - Clock::now();
  auto body = internal::EncodeLocal(local);
  if (!body) return std::move(body).error();
  if (body->size() + internal::kBindingBytes > cap_) {
    return MakeError(ErrorCode::kInvalidArgument, "encode local description",
                     "the description takes " + std::to_string(body->size()) +
                         " bytes, above the frame cap of " + std::to_string(cap_));
  }
  Close();
  auto begun = session_.Begin();
  if (!begun) return std::move(begun).error();
  send_seq_ = 0;
  recv_seq_ = 0;
  peer_.clear();

  auto run = [&]() -> Result<EndpointInfo> {
    if (server_) {
      QPC_TRY(Accept(deadline, total));
    } else {
      QPC_TRY(Connect(deadline, total));
    }
    session_.set_channel(Channel());
    auto hello = SendAndReceive(session_.EncodeHello(), "hello", deadline, total);
    if (!hello) return std::move(hello).error();
    QPC_TRY(session_.AcceptHello(*hello));
    auto sealed = session_.Seal(FrameType::kEndpoint, *body, send_seq_++);
    if (!sealed) return std::move(sealed).error();
    auto frame = SendAndReceive(*sealed, "endpoint description", deadline, total);
    if (!frame) return std::move(frame).error();
    auto opened = session_.Open(*frame, FrameType::kEndpoint, recv_seq_++);
    if (!opened) return std::move(opened).error();
    return internal::DecodePeer(*opened, Channel());
  };
  auto result = run();
  if (!result) {
    CloseSocket();
    return result;
  }
  exchanged_ = true;
  if (server_ && !persistent_ && acceptor_) {
    error_code ignored;
    acceptor_->close(ignored);
  }
  return result;
}

Result<void> TcpExchanger::Impl::Barrier(std::string_view stage, Clock::time_point deadline) {
  const auto total = deadline - Clock::now();
  QPC_TRY(internal::CheckStage(stage));
  if (!exchanged_ || !socket_.is_open()) {
    return MakeError(ErrorCode::kInvalidArgument, "barrier '" + std::string(stage) + "'",
                     "no connection: Barrier() needs a successful Exchange() first");
  }
  auto sealed = session_.Seal(FrameType::kBarrier, stage, send_seq_++);
  if (!sealed) return std::move(sealed).error();
  auto frame = SendAndReceive(*sealed, "barrier message", deadline, total);
  if (!frame) return std::move(frame).error();
  auto opened = session_.Open(*frame, FrameType::kBarrier, recv_seq_++);
  if (!opened) {
    CloseSocket();
    return std::move(opened).error();
  }
  auto match = internal::MatchStage(*opened, stage, Channel());
  if (!match) CloseSocket();
  exchanged_ = match.has_value();
  return match;
}

void TcpExchanger::Impl::Abort(std::string_view reason, Clock::time_point deadline) {
  if (socket_.is_open() && session_.peer_nonce()) {
    auto sealed = session_.Seal(FrameType::kAbort, reason.substr(0, 1024), send_seq_++);
    if (sealed) {
      bool done = false;
      asio::async_write(socket_, asio::buffer(*sealed),
                        [&](const error_code&, size_t) { done = true; });
      (void)Run(deadline, [&] { return done; });
    }
  }
  Close();
}

TcpExchanger::TcpExchanger(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TcpExchanger::~TcpExchanger() {
  if (impl_) impl_->Close();
}

Result<std::unique_ptr<TcpExchanger>> TcpExchanger::CreateServer(TcpServerOptions options) {
  QPC_TRY(CheckCap(options.max_payload_bytes));
  auto impl = std::make_unique<Impl>(true, std::move(options.psk), options.max_payload_bytes);
  QPC_TRY(impl->Listen(options));
  return std::unique_ptr<TcpExchanger>(new TcpExchanger(std::move(impl)));
}

Result<std::unique_ptr<TcpExchanger>> TcpExchanger::CreateClient(TcpClientOptions options) {
  QPC_TRY(CheckCap(options.max_payload_bytes));
  if (options.host.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp client", "no server host given");
  }
  if (options.port == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp client", "port 0 is not a server port");
  }
  if (options.retry_interval.count() < 0) {
    return MakeError(ErrorCode::kInvalidArgument, "tcp client", "negative retry_interval");
  }
  auto impl = std::make_unique<Impl>(false, std::move(options.psk), options.max_payload_bytes);
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

void TcpExchanger::Close() { impl_->Close(); }

uint16_t TcpExchanger::port() const { return impl_->port_; }

std::string TcpExchanger::peer_address() const { return impl_->peer_; }

}  // namespace qpconnect::oob
