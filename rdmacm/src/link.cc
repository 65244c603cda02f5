// SPDX-License-Identifier: MIT
#include "link.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <thread>

#include "cm.h"
#include "log.h"
#include "qpconnect/rdmacm/protocol_version.h"

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

// The key of QPCM_PSK_FILE, read once; nullopt without the variable. A key
// that cannot be read fails every link (and says why).
const Result<std::optional<oob::Psk>>& SharedPsk() {
  static const Result<std::optional<oob::Psk>>* psk = [] {
    const char* path = std::getenv("QPCM_PSK_FILE");
    if (path == nullptr || *path == '\0')
      return new Result<std::optional<oob::Psk>>(std::optional<oob::Psk>());
    auto loaded = oob::LoadPsk(path);
    if (!loaded) return new Result<std::optional<oob::Psk>>(loaded.error());
    return new Result<std::optional<oob::Psk>>(std::optional<oob::Psk>(std::move(*loaded)));
  }();
  return *psk;
}

}  // namespace

Link::Link(tcp::socket socket, bool client)
    : socket_(std::move(socket)), timer_(EngineIo()), client_(client) {}

std::shared_ptr<Link> Link::Dial(const sockaddr* peer, const sockaddr* source,
                                 std::chrono::milliseconds timeout) {
  bool bind = source != nullptr && source->sa_family == peer->sa_family && !IsWildcard(source);
  // One link per source address and peer: the source's port (an id's own,
  // after rdma_bind_addr) does not make another link.
  sockaddr_storage from_host{};
  if (bind) {
    std::memcpy(&from_host, source, AddressLength(source));
    SetPort(reinterpret_cast<sockaddr*>(&from_host), 0);
  }
  std::string key =
      (bind ? AddressText(reinterpret_cast<sockaddr*>(&from_host)) : std::string("*")) + "->" +
      AddressText(peer);
  if (auto it = Pool().find(key); it != Pool().end())
    if (auto live = it->second.lock(); live && !live->failed_) return live;
  auto link = std::make_shared<Link>(tcp::socket(EngineIo()), true);
  link->peer_text_ = AddressText(peer);
  Pool()[key] = link;
  tcp::endpoint ep = ToEndpoint(peer);
  std::optional<tcp::endpoint> from;
  if (bind) {
    from = ToEndpoint(source);
    from->port(0);
  }
  asio::post(EngineIo(), [link, ep, from, timeout] {
    if (from) {
      // From the program's own source address, so that the peer sees (and
      // logs) that address; if it cannot be bound, the kernel's choice.
      boost::system::error_code ec;
      link->socket_.open(ep.protocol(), ec);
      if (!ec) link->socket_.bind(*from, ec);
      if (ec) {
        boost::system::error_code ignored;
        link->socket_.close(ignored);
      }
    }
    link->timer_.expires_after(timeout);
    link->timer_.async_wait([link, timeout](const boost::system::error_code& ec) {
      if (ec) return;
      {
        MutexGuard out(link->out_mu_);
        if (link->connected_) return;
      }
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

void Link::Accept(tcp::socket socket) {
  auto link = std::make_shared<Link>(std::move(socket), false);
  boost::system::error_code ec;
  link->peer_text_ = EndpointText(link->socket_.remote_endpoint(ec));
  link->Start();
}

void Link::Start() {
  QPCM_DEBUG_LINE("link: tcp connected to " + peer_text_ + " id 0");
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  auto local = socket_.local_endpoint(ec);
  std::memcpy(&local_, local.data(), std::min(sizeof local_, size_t{local.size()}));
  auto remote = socket_.remote_endpoint(ec);
  if (!ec) std::memcpy(&remote_, remote.data(), std::min(sizeof remote_, size_t{remote.size()}));
  const auto& psk = SharedPsk();
  if (!psk) {
    Fail({LinkFailure::kProtocol, EINVAL, "QPCM_PSK_FILE: " + psk.error().ToString()});
    return;
  }
  oob::StreamOptions options;
  options.protocol = kProtocolName;
  options.version = kProtocolVersion;
  options.role = client_ ? oob::OobRole::kClient : oob::OobRole::kServer;
  options.psk = *psk;
  options.max_message_bytes = kMaxBody;
  options.channel = "tcp " + peer_text_;
  auto session = oob::StreamSession::Create(std::move(options));
  if (!session) {
    Fail({LinkFailure::kError, EIO, session.error().ToString()});
    return;
  }
  session_ = std::move(*session);
  {
    // Connected, for Send: the session's hello goes first (FillWireLocked).
    MutexGuard out(out_mu_);
    connected_ = true;
  }
  timer_.expires_after(kHelloTimeout);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
    if (e || self->Proved()) return;
    self->Fail({LinkFailure::kTimeout, ETIMEDOUT,
                self->peer_text_ +
                    (self->session_->PeerHelloSeen() ? " sent no key confirmation within "
                                                     : " sent no qpcm HELLO within ") +
                    std::to_string(kHelloTimeout.count()) + " ms"});
  });
  WriteNext();
  ReadMore();
}

void Link::Send(const Message& msg) {
  std::string body = EncodeBody(msg);
  MutexGuard out(out_mu_);
  if (failed_) return;
  outbox_.push_back(std::move(body));
  // Not yet connected (Start writes it), or the engine is writing (it takes
  // the outbox when done): nothing more to do.
  if (!connected_ || writing_) return;
  writing_ = true;
  asio::post(EngineIo(), [self = shared_from_this()] { self->WriteNext(); });
}


void Link::Close() {
  asio::post(EngineIo(), [self = shared_from_this()] {
    self->Fail({LinkFailure::kClosed, 0, "closed by this side"});
  });
}

Result<void> Link::FillWireLocked() {
  // Every body queued goes out in one write (a thousand REQs of one
  // program's loop, queued while a write is under way, cost one send, not a
  // thousand); the session's hello first. With a key, nothing else before
  // the peer's confirm (the session says when); without, the requests
  // follow our hello at once, saving a round trip (a peer that refuses our
  // hello closes the link before reading them).
  if (!hello_written_) {
    wire_ += session_->Hello();
    hello_written_ = true;
  }
  wire_ += handshake_out_;
  handshake_out_.clear();
  if (!session_->CanSend()) return Ok();
  for (; !outbox_.empty(); outbox_.pop_front())
    QPC_TRY(session_->AppendMessage(outbox_.front(), wire_));
  return Ok();
}

// Engine thread: writes wire_ (what a Send left, flagged writing_) and what
// the outbox holds that may go now, until both are empty.
void Link::WriteNext() {
  if (in_flight_) return;  // its completion comes back here
  MutexLock out(out_mu_);
  if (failed_ || !connected_) return;
  auto filled = FillWireLocked();
  if (!filled || wire_.empty()) {
    writing_ = false;
    out.unlock();
    if (!filled)
      Fail({LinkFailure::kError, EIO,
            "a message to " + peer_text_ + " cannot be sent: " + filled.error().ToString()});
    return;
  }
  writing_ = true;
  in_flight_ = true;
  // wire_ is not touched by another thread while writing_ is set: Send only
  // queues then.
  asio::const_buffer buffer = asio::buffer(wire_);
  out.unlock();
  asio::async_write(socket_, buffer,
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
                      QPCM_DEBUG_LINE("link: wrote " + std::to_string(n) + " bytes id 0");
                      self->in_flight_ = false;
                      if (ec) {
                        self->Fail({LinkFailure::kClosed, ec.value(),
                                    "write to " + self->peer_text_ + ": " + ec.message()});
                        return;
                      }
                      {
                        MutexGuard done(self->out_mu_);
                        self->wire_.clear();
                      }
                      self->WriteNext();
                    });
}

size_t Link::Unread() {
  // The socket's, and what was read and waits in inbox_ for its turn.
  int pending = 0;
  if (failed_ || ::ioctl(socket_.native_handle(), FIONREAD, &pending) != 0) pending = 0;
  return static_cast<size_t>(std::max(pending, 0)) + (inbox_.size() - inbox_at_);
}

void Link::ReadMore() {
  // Into a buffer of its own, made once: growing inbox_ by a chunk for each
  // read zero-filled 64 KB per read, a cost per message when messages come
  // one per segment.
  if (!chunk_) chunk_ = std::make_unique<char[]>(kReadChunk);
  socket_.async_read_some(
      asio::buffer(chunk_.get(), kReadChunk),
      [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
        if (self->failed_) return;
        QPCM_DEBUG_LINE("link: read " + std::to_string(n) + " bytes id 0");
        self->inbox_.append(self->chunk_.get(), n);
        if (ec) {
          self->Fail({LinkFailure::kClosed, ec.value(),
                      self->peer_text_ + " closed the connection" +
                          (ec == asio::error::eof ? "" : " (" + ec.message() + ")")});
          return;
        }
        self->Drain();
      });
}

// Up to kFramesPerTurn whole frames from inbox_, in order, through the
// session.
Link::Taken Link::TakeFrames() {
  for (size_t taken = 0;; ++taken) {
    std::string_view rest(inbox_.data() + inbox_at_, inbox_.size() - inbox_at_);
    if (taken == kFramesPerTurn) {
      // More only if another whole frame waits (a bad one fails next turn).
      auto whole = session_->WholeFrameBytes(rest);
      if (whole && *whole == 0) break;
      return Taken::kMore;
    }
    auto in = session_->Take(rest);
    if (!in) {
      Refused(in.error(), rest);
      return Taken::kFailed;
    }
    if (in->kind == oob::StreamInput::Kind::kIncomplete) break;  // its rest is still coming
    inbox_at_ += in->consumed;
    // A message's body points into inbox_, which stays as it is until the
    // loop ends.
    if (!OnInput(*in)) return Taken::kFailed;
  }
  inbox_.erase(0, inbox_at_);
  inbox_at_ = 0;
  return Taken::kAll;
}

void Link::Drain() {
  switch (TakeFrames()) {
    case Taken::kFailed:
      return;
    case Taken::kMore:
      // The rest after what is queued: the writes these frames caused (an
      // RTU per REP), timers, other links. A 64 KB read holds hundreds of
      // REPs, each validated and moved; taken at once, their RTUs waited
      // for the last, and a client held to 20 % of a vCPU was silent for
      // seconds (lab_rdmacm_fail_starved_client).
      asio::post(EngineIo(), [self = shared_from_this()] {
        if (!self->failed_) self->Drain();
      });
      return;
    case Taken::kAll:
      ReadMore();
      return;
  }
}

bool Link::OnInput(const oob::StreamInput& in) {
  last_heard_ = std::chrono::steady_clock::now();
  switch (in.kind) {
    case oob::StreamInput::Kind::kMessage: {
      auto msg = DecodeBody(in.body);
      if (!msg) {
        Fail({LinkFailure::kProtocol, EPROTO,
              peer_text_ + " broke the protocol: " + msg.error().ToString()});
        return false;
      }
      OnMessage(shared_from_this(), *msg);
      return !failed_;
    }
    case oob::StreamInput::Kind::kHello:
      QPCM_DEBUG_LINE("link: HELLO from " + peer_text_ + " id 0");
      if (!in.reply.empty()) {
        MutexGuard out(out_mu_);
        handshake_out_ += in.reply;  // our confirm
      }
      break;
    case oob::StreamInput::Kind::kConfirm:
      QPCM_DEBUG_LINE("link: key confirmed by " + peer_text_ + " id 0");
      break;
    case oob::StreamInput::Kind::kIncomplete:
      return true;
  }
  if (Proved()) timer_.cancel();
  WriteNext();  // the confirm, or what waited for the peer
  return true;
}

void Link::Refused(const Error& error, std::string_view bytes) {
  // Bytes that are not a frame at all, before any hello: a stray client
  // (or a server that is no qpcm peer), named by what it sent.
  if (error.attribute == "magic" && !session_->PeerHelloSeen()) {
    const auto* first = reinterpret_cast<const uint8_t*>(bytes.data());
    Fail({LinkFailure::kProtocol, EPROTO,
          peer_text_ + " is not a qpcm peer (first bytes " +
              Sample(first, std::min<size_t>(bytes.size(), 4)) + "): " + error.detail});
    return;
  }
  Fail({LinkFailure::kProtocol, error.code == ErrorCode::kAuth ? EACCES : EPROTO, error.detail});
}

void Link::Fail(const LinkFailure& failure) {
  if (failed_.exchange(true)) return;
  boost::system::error_code ec;
  timer_.cancel();
  {
    MutexGuard out(out_mu_);
    socket_.close(ec);
    outbox_.clear();
    wire_.clear();
  }
  if (!client_ && !Proved()) {
    // A stray client: no id knows this link.
    if (failure.kind != LinkFailure::kClosed || failure.err != 0)
      LogLine("rejected a connection from " + peer_text_ + ": " + failure.text);
    return;
  }
  // A peer that broke the protocol (another version or key, a frame that
  // fails authentication, a malformed message) is named here, whether or
  // not an id used the link yet.
  if (failure.kind == LinkFailure::kProtocol)
    LogLine((client_ ? "dropped the link to " : "dropped the link from ") + peer_text_ + ": " +
            failure.text);
  OnLinkDown(shared_from_this(), failure);
}

Result<std::shared_ptr<Listener>> Listener::Bind(const sockaddr* addr, std::optional<bool> v6only) {
  tcp::acceptor acceptor(EngineIo());
  tcp::endpoint ep = ToEndpoint(addr);
  boost::system::error_code ec;
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && v6only && addr->sa_family == AF_INET6)
    acceptor.set_option(asio::ip::v6_only(*v6only), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (ec)
    return Error(ErrorCode::kIo, ec.value(), "bind TCP " + AddressText(addr), "", ec.message());
  uint16_t port = acceptor.local_endpoint(ec).port();
  return std::make_shared<Listener>(std::move(acceptor), port);
}

Result<void> Listener::Listen(int backlog) {
  boost::system::error_code ec;
  acceptor_.listen(backlog > 0 ? backlog : asio::socket_base::max_listen_connections, ec);
  if (ec) return Error(ErrorCode::kIo, ec.value(), "listen", "", ec.message());
  asio::post(EngineIo(), [self = shared_from_this()] { self->AcceptNext(); });
  return {};
}

void Listener::AcceptNext() {
  acceptor_.async_accept(
      [self = shared_from_this()](const boost::system::error_code& ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
        if (!ec) Link::Accept(std::move(s));
        self->AcceptNext();
      });
}

void Listener::Close() {
  // On the engine thread (the pending accept completes with
  // operation_aborted), and waited for.
  std::promise<void> done;
  asio::post(EngineIo(), [self = shared_from_this(), &done] {
    boost::system::error_code ec;
    self->acceptor_.close(ec);
    done.set_value();
  });
  done.get_future().wait();
}

}  // namespace qpconnect::rdmacm
