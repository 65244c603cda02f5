// SPDX-License-Identifier: MIT
// The out-of-band TCP links that carry the library's CM messages (wire.h),
// on one engine thread (Boost.Asio) that runs for the process's life.
//
// One link per peer listener and process: every id of this process that
// connects to 10.77.0.1:7174 shares one TCP connection, so N connections cost
// N requests on one stream, not N handshakes (issue 29, item 6). A Listener
// is a listening id's TCP socket; each client it accepts becomes a server-side
// Link. The bytes on a link are an oob message stream
// (qpconnect/oob/stream_session.h: the exchangers' frames, hello, version
// check, key schedule and sealing); its messages are wire.h's bodies. The
// peer must prove itself within kHelloTimeout (its hello naming this
// protocol and version; with a key, its confirm too): anything else (a port
// scanner, an HTTP client, a native rdma_cm peer's stray traffic, another
// version) closes the link with one log line and touches no id.
//
// With a pre-shared key (QPCM_PSK_FILE, as qp-connect's --psk-file; the key
// file format of oob/psk.h), both sides must hold it: the session confirms
// the key both ways before any message, then seals every message. Without
// one, messages follow this side's hello in the same write.
//
// Messages and failures reach cm.h's OnMessage/OnLinkDown on the engine
// thread, which take library_mutex themselves.
//
// Thread-safety: Send, Close and Dial may be called from any thread.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "address.h"
#include "cm_link.h"
#include "lock.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/oob/stream_session.h"
#include "qpconnect/result.h"
#include "wire.h"

namespace qpconnect::rdmacm {

inline constexpr std::chrono::milliseconds kHelloTimeout{5000};

// The engine thread's io_context (started on first use).
boost::asio::io_context& EngineIo();

struct LinkFailure {
  enum Kind { kRefused, kTimeout, kClosed, kProtocol, kError } kind = kError;
  int err = 0;
  std::string text;
};

class Link : public CmLink, public std::enable_shared_from_this<Link> {
 public:
  // Client side: connects from `source` (the program's source address, its
  // port ignored; a wildcard or AF_UNSPEC one leaves the choice to the
  // kernel) to `peer` in the background within `timeout`; messages sent
  // before that are queued. Reuses a live link between the same two.
  static std::shared_ptr<Link> Dial(const sockaddr* peer, const sockaddr* source,
                                    std::chrono::milliseconds timeout) QPCM_REQUIRES(library_mutex);
  // Server side, for a socket a Listener accepted. Its requests go to
  // whichever id listens on its local address when they arrive (perftest
  // destroys a listener and listens again on the same port while the first
  // connection's link still carries requests).
  static void Accept(boost::asio::ip::tcp::socket socket);

  // Queues `msg`; the engine thread writes it, with everything else queued
  // by then in one write, in the order Send was called. Never blocks on the
  // network. May be called with library_mutex held (out_mu_ is taken last).
  //
  // Measured (notes of issue 29): writing from the calling thread instead,
  // when the link was idle, made cmtime -c 1000 about twice as slow in the
  // lab and N = 1 no faster. The thread that sends pays for the whole TCP
  // path, and the serial accepting thread of cmtime's server is the
  // bottleneck; the engine's write runs beside it.
  void Send(const Message& msg) override;
  void Close();

  bool client() const override { return client_; }
  const std::string& peer_text() const override { return peer_text_; }
  // When the last frame came from the peer (engine thread only: the sweep
  // runs there too). A peer still sending is alive, whatever it has not
  // answered yet: its answer may be queued behind its other frames.
  std::chrono::steady_clock::time_point last_heard() const override { return last_heard_; }
  // Bytes that came from the peer and wait, unread in the socket or read
  // and not yet taken (engine thread only). A peer whose bytes wait here is
  // alive; its answer may be among them.
  size_t Unread() override;
  // The local end's address (server side: where the client reached us).
  const sockaddr_storage& local() const override { return local_; }
  // The peer's end (both sides), set with local() once connected.
  const sockaddr_storage& remote() const override { return remote_; }
  bool failed() const override { return failed_; }

  Link(boost::asio::ip::tcp::socket socket, bool client);

 private:
  void Start();  // starts the session: sends its hello and starts reading (once connected)
  void ReadMore();
  // Takes up to kFramesPerTurn frames, then lets the engine's other work
  // (this link's writes among it) run before the rest; reads more once
  // none is left.
  void Drain();
  enum class Taken { kAll, kMore, kFailed };
  static constexpr size_t kFramesPerTurn = 16;
  Taken TakeFrames();
  // A frame the session took: the peer's hello or confirm, or a message
  // for cm.cc. False if the link failed.
  bool OnInput(const oob::StreamInput& in);
  // The session refused what the peer sent (`bytes`, from the refused frame
  // on): the link fails, naming the peer and why.
  void Refused(const Error& error, std::string_view bytes);
  void WriteNext();
  // Moves into wire_ what may go now: the session's hello first, then its
  // confirm, then (once the session can send) every queued body as a
  // message. An error if one cannot be sealed. REQUIRES: out_mu_ held.
  Result<void> FillWireLocked() QPCM_REQUIRES(out_mu_);
  void Fail(const LinkFailure& failure);
  // The peer proved itself (its hello; with a key, its confirm).
  bool Proved() const { return session_ && session_->Established(); }

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer timer_;
  bool client_;
  std::string peer_text_;
  sockaddr_storage local_{};
  sockaddr_storage remote_{};
  // The sending side's state. The engine thread alone writes connected_
  // and handshake_out_ (under out_mu_); every other member here is read
  // and written under out_mu_ only, by any thread (Send). out_mu_ is taken
  // last: nothing is locked under it.
  Mutex out_mu_;
  bool connected_ QPCM_GUARDED_BY(out_mu_) = false;
  // A WriteNext is posted or under way: Send only queues.
  bool writing_ QPCM_GUARDED_BY(out_mu_) = false;
  bool in_flight_ = false;  // an async_write is under way (engine thread only)
  bool hello_written_ QPCM_GUARDED_BY(out_mu_) = false;
  std::string handshake_out_ QPCM_GUARDED_BY(out_mu_);  // the session's confirm, not yet in wire_
  // Message bodies to send, in order. With a key they wait for the peer's
  // confirm; without, they follow our hello at once (FillWireLocked).
  std::deque<std::string> outbox_ QPCM_GUARDED_BY(out_mu_);
  // Framed bytes not yet written; while an async_write has them (writing_
  // set) no other thread touches them.
  std::string wire_ QPCM_GUARDED_BY(out_mu_);
  // The session (engine thread only: Start makes it, the reads and writes
  // use it there).
  std::unique_ptr<oob::StreamSession> session_;
  // The receiving side's: engine thread only.
  std::chrono::steady_clock::time_point last_heard_{};
  std::atomic<bool> failed_{false};
  std::string inbox_;    // bytes read and not yet taken, from inbox_at_ on
  size_t inbox_at_ = 0;  // where the next frame starts
  static constexpr size_t kReadChunk = 64 * 1024;
  std::unique_ptr<char[]> chunk_;  // what one read fills (engine thread only)
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Binds a TCP socket to `addr` (port 0: an ephemeral one) on the calling
  // thread, so EADDRINUSE comes back from rdma_bind_addr as natively. The
  // socket always reuses addresses (a destroyed rdma_cm id's port is free at
  // once, with no TIME_WAIT; which live ids may share a port is the
  // library's rule, ports.h). `v6only`, for an IPv6 address: IPV6_V6ONLY
  // set to it (rdma_set_option AFONLY); nullopt leaves the system's default
  // (net.ipv6.bindv6only), as rdma_cm's does.
  static Result<std::shared_ptr<Listener>> Bind(const sockaddr* addr,
                                                std::optional<bool> v6only = std::nullopt);
  // Starts accepting.
  Result<void> Listen(int backlog);
  uint16_t port() const { return port_; }
  // Stops accepting and closes the socket before it returns, so the port can
  // be bound again at once. REQUIRES: library_mutex not held (it waits for
  // the engine thread).
  void Close() QPCM_EXCLUDES(library_mutex);

  explicit Listener(boost::asio::ip::tcp::acceptor acceptor, uint16_t port)
      : acceptor_(std::move(acceptor)), port_(port) {}

 private:
  void AcceptNext();
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_;
};

}  // namespace qpconnect::rdmacm
