// SPDX-License-Identifier: MIT
// TcpExchanger: endpoint descriptions over one TCP connection (Boost.Asio).
//
// Roles follow ibv_rc_pingpong: the server listens (default port 18515), the
// client names the server's host. On one connection each side sends a hello
// (its nonce), with a PSK a key confirmation (and nothing else until the
// peer's verified), then its description, bound to both nonces (with a PSK
// encrypted and authenticated, AES-256-GCM); Barrier() sends and awaits a
// small stage message on the same connection. Every message is a frame
// (frame.h) whose length is checked against a cap before any allocation.
// The connection is the protocol driver's byte channel, as for a caller's
// own channel (channel.h): the side whose hello nonce sorts lower sends its
// description first and the other reads first, so descriptions far larger
// than the socket buffers never deadlock.
//
// One deadline covers a whole Exchange(): accept or resolve and connect,
// hellos, send and receive. Expiry closes the connection and yields kTimeout
// naming what the exchanger was waiting for.
//
// A stray client does not end the rendezvous. A client that fails before it
// has proved itself (garbage or silence instead of a hello, a frame of
// another version, a PSK on one side only, with a PSK a key confirmation that
// does not verify) is rejected: the server logs one line naming its address
// and why (qpconnect/log.h, level warning), closes that connection and serves
// the next client, within the same deadline. A client gets handshake_timeout
// to prove itself and can make the server read at most 2 KiB before it has;
// after max_rejected_clients rejections, or at the deadline, Exchange() fails
// with the last rejection's error (kAuth for a wrong key), noting how many
// clients were rejected.
//
// Server modes:
//   default     each Exchange() serves one client; the listener closes after
//               the first successful exchange (a failed client does not close
//               it, so the caller may call Exchange() again).
//   persistent  the listener stays open: each Exchange() closes the previous
//               client's connection and serves the next one.
//
// Thread-safety: one thread at a time, like every Exchanger.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/protocol_exchanger.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

inline constexpr uint16_t kDefaultTcpPort = 18515;

struct TcpServerOptions {
  // Numeric address or host name to bind; empty = any address (dual-stack
  // [::] where IPv6 is available, else 0.0.0.0).
  std::string bind_address;
  uint16_t port = kDefaultTcpPort;  // 0 = an ephemeral port; see TcpExchanger::port()
  bool persistent = false;
  std::optional<Psk> psk;  // both sides need the same key, or neither
  uint32_t max_payload_bytes = kDefaultMaxPayloadBytes;
  // The most QPs the client's description may hold; 0: as many as ours. Its
  // frame is refused, before it is read, above what that many QPs can take.
  uint32_t max_peer_qps = 0;
  // Time an accepted client has to prove itself (hello, with a PSK the key
  // confirmation) before it is rejected as a stray; and how many strays one
  // Exchange() rejects before it gives up.
  std::chrono::milliseconds handshake_timeout{5000};
  uint32_t max_rejected_clients = 64;
};

struct TcpClientOptions {
  std::string host;  // name, IPv4 or IPv6 literal ("::1" or "[::1]")
  uint16_t port = kDefaultTcpPort;
  std::optional<Psk> psk;
  uint32_t max_payload_bytes = kDefaultMaxPayloadBytes;
  uint32_t max_peer_qps = 0;  // as for the server
  // A refused connection (server not listening yet) is retried this often
  // until the deadline; zero fails on the first refusal.
  std::chrono::milliseconds retry_interval{100};
};

// The calls of the Exchanger interface (protocol_exchanger.h), over the
// connection:
//   Prepare()   connects (client, retrying until the server listens) or
//               accepts (server), then greets the peer, so that this can run
//               while the caller opens its device; the next Exchange() then
//               only swaps descriptions. Errors as Exchange()'s first steps.
//   Exchange()  server: accepts a client; client: resolves and connects (a
//               client that has a connection from an earlier Exchange()
//               reconnects). Then swaps descriptions. The detail of an error
//               says which step failed; after an error the connection is
//               closed.
//   Barrier()   over the connection of the last successful Exchange() (as
//               BarrierWithNote()); kInvalidArgument without one.
//   Abort()     sends the abort, then closes the connection.
//   Cancel()    ends a pending accept, connect, read, write or barrier; the
//               connection stays open for the abort until Close(), the next
//               Exchange() or the destructor.
//   PollPeer()  an error once the peer closed or reset the connection or sent
//               an abort.
//   Addresses() this side's address and the peer's, of the current or last
//               connection.
class TcpExchanger : public ProtocolExchanger {
 public:
  // Binds and listens at once, so port() is known before Exchange(). Errors:
  // kInvalidArgument (bad options), kNotFound (bind address does not resolve),
  // kIo (bind or listen failed, e.g. EADDRINUSE).
  static Result<std::unique_ptr<TcpExchanger>> CreateServer(TcpServerOptions options);

  // Does not connect yet: Exchange() does. kInvalidArgument for an empty host
  // or a bad option.
  static Result<std::unique_ptr<TcpExchanger>> CreateClient(TcpClientOptions options);

  // Closes the connection (not a persistent server's listener). Idempotent.
  void Close();

  // Server: the bound port (useful with port 0). Client: the server's port.
  uint16_t port() const;
  // "addr:port" of the peer of the current or last connection; empty if none.
  std::string peer_address() const;

 private:
  class Impl;
  explicit TcpExchanger(std::unique_ptr<Impl> impl);
  Impl& impl() const;
};

}  // namespace qpconnect::oob
