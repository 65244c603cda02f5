// The out-of-band TCP links that carry the library's CM messages (wire.h),
// on one engine thread (Boost.Asio) that runs for the process's life.
//
// One link per peer listener and process: every id of this process that
// connects to 10.77.0.1:7174 shares one TCP connection, so N connections cost
// N requests on one stream, not N handshakes (issue 29, item 6). A Listener
// is a listening id's TCP socket; each client it accepts becomes a server-side
// Link. A link's first message each way must be HELLO within kHelloTimeout:
// anything else (a port scanner, an HTTP client, a native rdma_cm peer's
// stray traffic) closes it with one log line and touches no id.
//
// With a pre-shared key (QPCM_PSK_FILE, as qp-connect's --psk-file; the key
// file format of oob/psk.h), both sides must hold it: after the HELLOs every
// body is sealed with AES-256-GCM under a key per direction, derived with
// HKDF from the key and both nonces, the frame's sequence number as IV. A
// peer without the key reads nothing and is refused at its first frame.
//
// Messages and failures reach cm.h's OnMessage/OnLinkDown on the engine
// thread, which take Lock() themselves.
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
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "address.h"
#include "cm_link.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/oob/psk.h"
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
  // REQUIRES: Lock() held.
  static std::shared_ptr<Link> Dial(const sockaddr* peer, const sockaddr* source,
                                    std::chrono::milliseconds timeout);
  // Server side, for a socket a Listener accepted. Its requests go to
  // whichever id listens on its local address when they arrive (perftest
  // destroys a listener and listens again on the same port while the first
  // connection's link still carries requests).
  static void Accept(boost::asio::ip::tcp::socket socket);

  // Queues `msg`; the engine thread writes it, with everything else queued
  // by then in one write, in the order Send was called. Never blocks on the
  // network. May be called with Lock() held.
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
  // Server side: the placement of local(), computed once (under Lock()).
  std::optional<Placement> placement;
  std::optional<Error> placement_error;
  // Description bases (id_part.h), under Lock(): those of the peer, decoded,
  // by its numbers (at most kMaxBases), and the numbers of ours it has.
  static constexpr size_t kMaxBases = 64;
  std::map<uint32_t, EndpointInfo> peer_bases;
  std::set<uint32_t> bases_sent;
  // Server side, under Lock(): requests that came while no id listened on
  // local() (cm.cc: a program that destroys its listener and listens again
  // on the same port), in order, waiting a short grace for a listener.
  struct ParkedRequest {
    Message msg;
    std::optional<Result<EndpointInfo>> decoded;
    std::chrono::steady_clock::time_point since;
  };
  std::deque<ParkedRequest> parked;
  bool failed() const override { return failed_; }

  Link(boost::asio::ip::tcp::socket socket, bool client);

 private:
  void Start();  // sends HELLO and starts reading (once connected)
  void ReadMore();
  // Takes up to kFramesPerTurn frames, then lets the engine's other work
  // (this link's writes among it) run before the rest; reads more once
  // none is left.
  void Drain();
  enum class Taken { kAll, kMore, kFailed };
  static constexpr size_t kFramesPerTurn = 16;
  Taken TakeFrames();
  bool OnFrame(std::string body);
  void WriteNext();
  // Moves the bodies that may go now from outbox_ into wire_ (the HELLO
  // first; on a keyed link nothing more before the peer's HELLO), sealed.
  // False if sealing failed. REQUIRES: out_mu_ held.
  bool FillWireLocked();
  void Fail(const LinkFailure& failure);
  // The peer's HELLO: checks both sides agree on a key, derives the keys.
  bool OnHello(const Message& hello);

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer timer_;
  bool client_;
  std::string peer_text_;
  sockaddr_storage local_{};
  sockaddr_storage remote_{};
  // The sending side's state. The engine thread alone changes connected_,
  // hello_seen_, plain_, sealed_ and send_key_, under out_mu_ (it reads them
  // without); every other member here is read and written under out_mu_ only,
  // by any thread (Send). out_mu_ is taken last: nothing is locked under it.
  std::mutex out_mu_;
  bool connected_ = false;
  bool hello_seen_ = false;  // the peer's HELLO arrived
  bool plain_ = true;        // no pre-shared key: frames need no keys, may follow our HELLO
  bool sealed_ = false;
  oob::SecretKey send_key_{};
  bool writing_ = false;    // a WriteNext is posted or under way: Send only queues
  bool in_flight_ = false;  // an async_write is under way (engine thread only)
  bool hello_written_ = false;
  // Message bodies to send; the first is our HELLO. On a keyed link the rest
  // wait for the peer's (its nonce makes the keys that seal them); on a plain
  // one they follow at once (FillWireLocked).
  std::deque<std::string> outbox_;
  std::string wire_;  // framed bytes not yet written
  uint64_t send_seq_ = 0;
  // The receiving side's: engine thread only.
  std::chrono::steady_clock::time_point last_heard_{};
  std::string nonce_;  // ours
  oob::SecretKey recv_key_{};
  uint64_t recv_seq_ = 0;
  std::atomic<bool> failed_{false};
  std::string inbox_;    // bytes read and not yet taken, from inbox_at_ on
  size_t inbox_at_ = 0;  // where the next frame starts
  static constexpr size_t kReadChunk = 64 * 1024;
  std::unique_ptr<char[]> chunk_;  // what one read fills (engine thread only)
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Binds a TCP socket to `addr` (port 0: an ephemeral one) on the calling
  // thread, so EADDRINUSE comes back from rdma_bind_addr as natively.
  static Result<std::shared_ptr<Listener>> Bind(const sockaddr* addr, bool reuseaddr);
  // Starts accepting.
  Result<void> Listen(int backlog);
  uint16_t port() const { return port_; }
  // Stops accepting and closes the socket before it returns, so the port can
  // be bound again at once. REQUIRES: Lock() not held (it waits for the
  // engine thread).
  void Close();

  explicit Listener(boost::asio::ip::tcp::acceptor acceptor, uint16_t port)
      : acceptor_(std::move(acceptor)), port_(port) {}

 private:
  void AcceptNext();
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_;
};

}  // namespace qpconnect::rdmacm
