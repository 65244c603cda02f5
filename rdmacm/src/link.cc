#include "link.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
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

oob::AeadIv Iv(uint64_t seq) {
  oob::AeadIv iv{};
  for (size_t i = 0; i < 8; ++i) iv[4 + i] = static_cast<uint8_t>(seq >> (56 - 8 * i));
  return iv;
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
  // The nonce only feeds the key derivation: without a key it stays zero
  // (and the first link pays no random generator's start-up).
  bool plain = !(*psk).has_value();
  if (!plain) {
    auto nonce = oob::RandomNonce();
    if (!nonce) {
      Fail({LinkFailure::kError, EIO, nonce.error().ToString()});
      return;
    }
    nonce_.assign(nonce->begin(), nonce->end());
  }
  Message hello;
  hello.hello_flags = (*psk).has_value() ? kHelloFlagPsk : 0;
  hello.nonce = nonce_;
  {
    // Connected, for Send, with the HELLO first in the outbox.
    std::lock_guard<std::mutex> out(out_mu_);
    plain_ = plain;
    outbox_.push_front(EncodeBody(hello));
    connected_ = true;
  }
  timer_.expires_after(kHelloTimeout);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
    if (e || self->hello_seen_) return;
    self->Fail({LinkFailure::kTimeout, ETIMEDOUT,
                self->peer_text_ + " sent no qpcm HELLO within " +
                    std::to_string(kHelloTimeout.count()) + " ms"});
  });
  WriteNext();
  ReadMore();
}

bool Link::OnHello(const Message& hello) {
  const auto& psk = SharedPsk();
  bool ours = psk && (*psk).has_value();
  bool theirs = (hello.hello_flags & kHelloFlagPsk) != 0;
  if (ours != theirs) {
    Fail({LinkFailure::kProtocol, EACCES,
          ours ? peer_text_ + " has no pre-shared key and this side has one (QPCM_PSK_FILE)"
               : peer_text_ + " uses a pre-shared key and this side has none (set QPCM_PSK_FILE)"});
    return false;
  }
  if (ours) {
    const std::string& client_nonce = client_ ? nonce_ : hello.nonce;
    const std::string& server_nonce = client_ ? hello.nonce : nonce_;
    std::string ikm(reinterpret_cast<const char*>((**psk).bytes().data()), (**psk).bytes().size());
    auto c2s = oob::HkdfSha256(ikm, client_nonce + server_nonce, "qpcm c2s");
    auto s2c = oob::HkdfSha256(ikm, client_nonce + server_nonce, "qpcm s2c");
    oob::WipeSecret(ikm.data(), ikm.size());
    if (!c2s || !s2c) {
      Fail({LinkFailure::kError, EIO, "key derivation failed"});
      return false;
    }
    recv_key_ = client_ ? *s2c : *c2s;
    std::lock_guard<std::mutex> out(out_mu_);
    send_key_ = client_ ? *c2s : *s2c;
    sealed_ = true;
  }
  {
    std::lock_guard<std::mutex> out(out_mu_);
    hello_seen_ = true;
  }
  QPCM_DEBUG_LINE("link: HELLO from " + peer_text_ + " id 0");
  timer_.cancel();
  WriteNext();
  return true;
}

void Link::Send(const Message& msg) {
  std::string body = EncodeBody(msg);
  std::lock_guard<std::mutex> out(out_mu_);
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

bool Link::FillWireLocked() {
  // Every body queued goes out in one write (a thousand REQs of one
  // program's loop, queued while a write is under way, cost one send, not a
  // thousand); the HELLO first. With a key, nothing else before the peer's
  // HELLO (its nonce makes the keys); without, the requests follow our HELLO
  // at once, saving a round trip (a peer that refuses our HELLO closes the
  // link before reading them).
  while (!outbox_.empty()) {
    bool hello = !hello_written_;
    if (!hello && !hello_seen_ && !plain_) break;
    std::string body = std::move(outbox_.front());
    outbox_.pop_front();
    if (hello) {
      hello_written_ = true;
    } else if (sealed_) {
      auto sealed = oob::AeadSeal(send_key_, Iv(send_seq_++), client_ ? "qpcm c" : "qpcm s", body);
      if (!sealed) return false;
      body = std::move(*sealed);
    }
    wire_ += FramePrefix(body.size());
    wire_ += body;
    if (hello && !plain_) break;
  }
  return true;
}

// Engine thread: writes wire_ (what a Send left, flagged writing_) and what
// the outbox holds that may go now, until both are empty.
void Link::WriteNext() {
  if (in_flight_) return;  // its completion comes back here
  std::unique_lock<std::mutex> out(out_mu_);
  if (failed_ || !connected_) return;
  bool sealed_ok = FillWireLocked();
  if (!sealed_ok || wire_.empty()) {
    writing_ = false;
    out.unlock();
    if (!sealed_ok) Fail({LinkFailure::kError, EIO, "sealing a frame failed"});
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
                        std::lock_guard<std::mutex> done(self->out_mu_);
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

// Up to kFramesPerTurn whole frames from inbox_, in order.
Link::Taken Link::TakeFrames() {
  for (size_t taken = 0;; ++taken) {
    if (inbox_.size() - inbox_at_ < 4) break;
    const auto* h = reinterpret_cast<const uint8_t*>(inbox_.data() + inbox_at_);
    uint32_t len = uint32_t{h[0]} << 24 | uint32_t{h[1]} << 16 | uint32_t{h[2]} << 8 | h[3];
    if (len == 0 || len > kMaxBody + oob::kAeadTagBytes) {
      Fail({LinkFailure::kProtocol, EPROTO,
            peer_text_ + " is not a qpcm peer (first bytes " + Sample(h, 4) + ")"});
      return Taken::kFailed;
    }
    if (inbox_.size() - inbox_at_ - 4 < len) break;  // the rest of this frame is still coming
    if (taken == kFramesPerTurn) return Taken::kMore;
    std::string body = inbox_.substr(inbox_at_ + 4, len);
    inbox_at_ += 4 + len;
    if (!OnFrame(std::move(body))) return Taken::kFailed;
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

bool Link::OnFrame(std::string body) {
  last_heard_ = std::chrono::steady_clock::now();
  if (hello_seen_ && sealed_) {
    auto plain = oob::AeadOpen(recv_key_, Iv(recv_seq_++), client_ ? "qpcm s" : "qpcm c", body);
    if (!plain) {
      Fail({LinkFailure::kProtocol, EACCES,
            "a frame from " + peer_text_ +
                " failed authentication (the two pre-shared keys differ, or it was altered)"});
      return false;
    }
    body = std::move(*plain);
  }
  auto msg = DecodeBody(body);
  if (!msg || (!hello_seen_ && msg->type != MsgType::kHello)) {
    std::string why =
        msg ? std::string("its first message is ") + MsgTypeName(msg->type) + ", not HELLO"
            : msg.error().ToString();
    Fail({LinkFailure::kProtocol, EPROTO,
          peer_text_ + " is not a qpcm peer or broke the protocol: " + why});
    return false;
  }
  if (msg->type == MsgType::kHello) {
    if (hello_seen_) {
      Fail({LinkFailure::kProtocol, EPROTO, peer_text_ + " sent a second HELLO"});
      return false;
    }
    return OnHello(*msg);
  }
  OnMessage(shared_from_this(), *msg);
  return !failed_;
}

void Link::Fail(const LinkFailure& failure) {
  if (failed_.exchange(true)) return;
  boost::system::error_code ec;
  timer_.cancel();
  {
    std::lock_guard<std::mutex> out(out_mu_);
    socket_.close(ec);
    outbox_.clear();
    wire_.clear();
  }
  if (!client_ && !hello_seen_) {
    // A stray client: no id knows this link.
    if (failure.kind != LinkFailure::kClosed || failure.err != 0)
      LogLine("rejected a connection from " + peer_text_ + ": " + failure.text);
    return;
  }
  // A peer that broke the protocol (a frame that fails authentication, a
  // malformed message) is named here, whether or not an id used the link yet.
  if (failure.kind == LinkFailure::kProtocol)
    LogLine((client_ ? "dropped the link to " : "dropped the link from ") + peer_text_ + ": " +
            failure.text);
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
