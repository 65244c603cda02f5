#include "link.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <cstring>
#include <map>
#include <thread>

#include "cm.h"
#include "log.h"

namespace qpconnect::rdmacm {
namespace asio = boost::asio;
using asio::ip::tcp;

asio::io_context& EngineIo() {
  static asio::io_context* io = [] {
    auto* ctx = new asio::io_context(1);  // never destroyed: runs until exit
    std::thread([ctx] {
      auto guard = asio::make_work_guard(*ctx);
      for (;;) {
        try {
          ctx->run();
          break;
        } catch (const std::exception& e) {
          LogLine(std::string("engine: ") + e.what());
        }
      }
    }).detach();
    return ctx;
  }();
  return *io;
}

namespace {

tcp::endpoint ToEndpoint(const sockaddr* addr) {
  tcp::endpoint ep;
  std::memcpy(ep.data(), addr, AddressLength(addr));
  return ep;
}

std::string EndpointText(const tcp::endpoint& ep) {
  return AddressText(reinterpret_cast<const sockaddr*>(ep.data()));
}

std::map<std::string, std::weak_ptr<Link>>& Pool() {
  static auto* pool = new std::map<std::string, std::weak_ptr<Link>>;
  return *pool;
}

// The first bytes of what a stray client sent, for the log: hex and text.
std::string Sample(const uint8_t* p, size_t n) {
  std::string hex, text;
  char b[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    hex += (i ? " " : "") + std::string(b);
    text += std::isprint(p[i]) ? static_cast<char>(p[i]) : '.';
  }
  return hex + " '" + text + "'";
}

}  // namespace

Link::Link(tcp::socket socket, bool client, uint32_t listener)
    : socket_(std::move(socket)),
      timer_(EngineIo()),
      client_(client),
      listener_(listener) {}

std::shared_ptr<Link> Link::Dial(const sockaddr* peer, std::chrono::milliseconds timeout) {
  std::string key = AddressText(peer);
  if (auto it = Pool().find(key); it != Pool().end())
    if (auto live = it->second.lock(); live && !live->failed_) return live;
  auto link = std::make_shared<Link>(tcp::socket(EngineIo()), true, 0);
  link->peer_text_ = key;
  Pool()[key] = link;
  tcp::endpoint ep = ToEndpoint(peer);
  asio::post(EngineIo(), [link, ep, timeout] {
    link->timer_.expires_after(timeout);
    link->timer_.async_wait([link, timeout](const boost::system::error_code& ec) {
      if (ec || link->connected_) return;
      link->Fail({LinkFailure::kTimeout, ETIMEDOUT,
                  "no answer from " + link->peer_text_ + " within " +
                      std::to_string(timeout.count()) + " ms"});
    });
    link->socket_.async_connect(ep, [link](const boost::system::error_code& ec) {
      if (link->failed_) return;
      if (ec) {
        bool refused = ec == asio::error::connection_refused;
        link->Fail({refused ? LinkFailure::kRefused : LinkFailure::kError, ec.value(),
                    refused ? "nobody listens at " + link->peer_text_ + " (connection refused)"
                            : "connect " + link->peer_text_ + ": " + ec.message()});
        return;
      }
      link->Start();
    });
  });
  return link;
}

void Link::Accept(tcp::socket socket, uint32_t listener) {
  auto link = std::make_shared<Link>(std::move(socket), false, listener);
  boost::system::error_code ec;
  link->peer_text_ = EndpointText(link->socket_.remote_endpoint(ec));
  link->Start();
}

void Link::Start() {
  connected_ = true;
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  auto local = socket_.local_endpoint(ec);
  std::memcpy(&local_, local.data(), std::min(sizeof local_, size_t{local.size()}));
  outbox_.push_front(EncodeFrame(Message{}));  // HELLO goes first
  timer_.expires_after(kHelloTimeout);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
    if (e || self->hello_seen_) return;
    self->Fail({LinkFailure::kTimeout, ETIMEDOUT,
                self->peer_text_ + " sent no qpcm HELLO within " +
                    std::to_string(kHelloTimeout.count()) + " ms"});
  });
  WriteNext();
  ReadHeader();
}

void Link::Send(const Message& msg) {
  asio::post(EngineIo(), [self = shared_from_this(), frame = EncodeFrame(msg)]() mutable {
    if (self->failed_) return;
    self->outbox_.push_back(std::move(frame));
    if (self->connected_) self->WriteNext();
  });
}

void Link::Close() {
  asio::post(EngineIo(), [self = shared_from_this()] {
    self->Fail({LinkFailure::kClosed, 0, "closed by this side"});
  });
}

void Link::WriteNext() {
  if (writing_ || outbox_.empty() || failed_) return;
  writing_ = true;
  asio::async_write(socket_, asio::buffer(outbox_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->Fail({LinkFailure::kClosed, ec.value(),
                                    "write to " + self->peer_text_ + ": " + ec.message()});
                        return;
                      }
                      self->outbox_.pop_front();
                      self->WriteNext();
                    });
}

void Link::ReadHeader() {
  asio::async_read(socket_, asio::buffer(header_),
                   [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                     if (self->failed_) return;
                     if (ec) {
                       self->Fail({LinkFailure::kClosed, ec.value(),
                                   self->peer_text_ + " closed the connection" +
                                       (ec == asio::error::eof ? "" : " (" + ec.message() + ")")});
                       return;
                     }
                     uint32_t len = uint32_t{self->header_[0]} << 24 |
                                    uint32_t{self->header_[1]} << 16 |
                                    uint32_t{self->header_[2]} << 8 | self->header_[3];
                     if (len == 0 || len > kMaxBody) {
                       self->Fail({LinkFailure::kProtocol, EPROTO,
                                   self->peer_text_ + " is not a qpcm peer (first bytes " +
                                       Sample(self->header_, 4) + ")"});
                       return;
                     }
                     self->ReadBody(len);
                   });
}

void Link::ReadBody(uint32_t length) {
  body_.resize(length);
  asio::async_read(socket_, asio::buffer(body_),
                   [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                     if (self->failed_) return;
                     if (ec) {
                       self->Fail({LinkFailure::kClosed, ec.value(),
                                   self->peer_text_ + " closed the connection mid-message"});
                       return;
                     }
                     auto msg = DecodeBody(self->body_);
                     if (!msg || (!self->hello_seen_ && msg->type != MsgType::kHello)) {
                       std::string why = msg ? std::string("its first message is ") +
                                                   MsgTypeName(msg->type) + ", not HELLO"
                                             : msg.error().ToString();
                       self->Fail({LinkFailure::kProtocol, EPROTO,
                                   self->peer_text_ + " is not a qpcm peer or broke the protocol: " +
                                       why});
                       return;
                     }
                     if (msg->type == MsgType::kHello) {
                       self->hello_seen_ = true;
                       self->timer_.cancel();
                     } else {
                       OnMessage(self, *msg);
                     }
                     self->ReadHeader();
                   });
}

void Link::Fail(const LinkFailure& failure) {
  if (failed_.exchange(true)) return;
  boost::system::error_code ec;
  timer_.cancel();
  socket_.close(ec);
  outbox_.clear();
  if (!client_ && !hello_seen_) {
    // A stray client: no id knows this link.
    if (failure.kind != LinkFailure::kClosed || failure.err != 0)
      LogLine("rejected a connection from " + peer_text_ + ": " + failure.text);
    return;
  }
  OnLinkDown(shared_from_this(), failure);
}

Result<std::shared_ptr<Listener>> Listener::Bind(const sockaddr* addr, bool reuseaddr) {
  tcp::acceptor acceptor(EngineIo());
  tcp::endpoint ep = ToEndpoint(addr);
  boost::system::error_code ec;
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  (void)reuseaddr;  // TCP's own TIME_WAIT reuse is always wanted; rdma_cm's option is per id
  if (!ec) acceptor.bind(ep, ec);
  if (ec)
    return Error(ErrorCode::kIo, ec.value(), "bind TCP " + AddressText(addr), "",
                 ec.message());
  uint16_t port = acceptor.local_endpoint(ec).port();
  return std::make_shared<Listener>(std::move(acceptor), port);
}

Result<void> Listener::Listen(uint32_t handle, int backlog) {
  boost::system::error_code ec;
  acceptor_.listen(backlog > 0 ? backlog : asio::socket_base::max_listen_connections, ec);
  if (ec) return Error(ErrorCode::kIo, ec.value(), "listen", "", ec.message());
  asio::post(EngineIo(), [self = shared_from_this(), handle] { self->AcceptNext(handle); });
  return {};
}

void Listener::AcceptNext(uint32_t handle) {
  acceptor_.async_accept(
      [self = shared_from_this(), handle](const boost::system::error_code& ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
        if (!ec) Link::Accept(std::move(s), handle);
        self->AcceptNext(handle);
      });
}

void Listener::Close() {
  // On the engine thread: the pending accept completes with operation_aborted.
  asio::post(EngineIo(), [self = shared_from_this()] {
    boost::system::error_code ec;
    self->acceptor_.close(ec);
  });
}

}  // namespace qpconnect::rdmacm
