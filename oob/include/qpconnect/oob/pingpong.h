// SPDX-License-Identifier: MIT
// The pingpong dialect: the out-of-band exchange of rdma-core's stock
// ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong, so that qp-connect can
// stand in for either side of them (docs/interop.md).
//
// The wire format is one fixed 52-byte record per side,
//   "%04x:%06x:%06x:%s" of lid:qpn:psn:gid, then a NUL,
// where the GID is its 16 raw bytes as 32 hex digits in wire order, and one
// 5-byte "done\0" from the client. There is no version, no MTU, no P_Key, no
// message size and no transport on the wire; the two programs simply trust
// that their command lines agree.
//
// The order is not the Exchanger interface's (exchanger.h), because the stock
// server moves its QP to RTR and RTS *between* reading the client's record and
// writing its own. So this header exposes the steps, and the caller drives
// them in the stock order:
//   client: Connect(), SendOwn(), ReadPeer(), SendDone(); then RTR, RTS, send.
//   server: AcceptAndReadPeer(); RTR, RTS; SendOwn(); ReadDone().
//
// Every step takes a deadline (one deadline may cover the whole exchange);
// expiry yields kTimeout naming what was awaited and how much of it arrived.
// Sockets are Boost.Asio's (kept out of this header), every wait bounded as in
// the other out-of-band channels (docs/oob.md).
//
// Thread-safety: one thread at a time per object; the codec functions are pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

// sizeof "0000:000000:000000:00000000000000000000000000000000" in the stock
// sources: 51 characters and the NUL, all written in one write().
inline constexpr size_t kPingpongRecordBytes = 52;
// sizeof "done": the client's last message.
inline constexpr size_t kPingpongDoneBytes = 5;
inline constexpr uint16_t kPingpongDefaultPort = 18515;

// What one side of the pingpong dialect says about itself.
struct PingpongRecord {
  uint16_t lid = 0;
  uint32_t qpn = 0;  // 24-bit
  uint32_t psn = 0;  // 24-bit
  Gid gid{};         // all zeros when the stock program ran without -g

  friend bool operator==(const PingpongRecord&, const PingpongRecord&) = default;
};

// The 52 bytes of `record` (the last one NUL). REQUIRES: qpn and psn fit in
// 24 bits (higher bits are masked off).
std::string EncodePingpongRecord(const PingpongRecord& record);

// Parses exactly the stock layout: 52 bytes, 4/6/6/32 hex digits separated by
// ':' and a final NUL. Hex digits of either case are accepted; anything else is
// kProtocol with `attribute` naming the field ("length", "lid", "qpn", "psn",
// "gid", "separator", "terminator") and the detail saying what was found.
// Values the dialect cannot mean are refused too: qpn 0 and 1 (the special
// QPs) and multicast/permissive LIDs (0xc000 and above).
Result<PingpongRecord> DecodePingpongRecord(std::string_view bytes);

// The record for the first QP of `local`: port.lid, qps[0], and the GID in use
// (zeros when there is none). REQUIRES: !local.qps.empty().
PingpongRecord RecordFromEndpoint(const EndpointInfo& local);

// A minimal description of a stock peer, with only what its record says and
// what the stock programs are known to do. Facts the dialect does not carry are
// left unknown (active MTU, P_Key, GID table, device limits), so the validator
// reports them as unchecked rather than guessing. Conventions:
//   path.use_grh  = the stock peer sets is_global only when *our* GID has a
//                   non-zero interface id (its pp_connect_ctx); `local_gid` is
//                   the GID we publish. Its sgid is the GID of its record.
//   path.path_mtu = `assumed_mtu` (the stock -m; it is never exchanged), forced.
//   port.link_layer, port.active: unknown (the record does not say; a LID of 0
//                   suggests Ethernet, but the port state would still be a guess).
//   keys.qkey     = 0x11111111 on UD (hard-coded by ud_pingpong).
//   path.hop_limit = 64 on UD (its AH), 1 otherwise.
EndpointInfo EndpointFromRecord(const PingpongRecord& record, Transport transport,
                                const Gid& local_gid, Mtu assumed_mtu, std::string host);

// True if the GID's interface id (its low 64 bits) is non-zero: the stock
// programs' condition for is_global.
bool PingpongUsesGrh(const Gid& remote_gid);

using PingpongClock = std::chrono::steady_clock;

struct PingpongServerOptions {
  std::string bind_address;              // empty: any address (like the stock AI_PASSIVE)
  uint16_t port = kPingpongDefaultPort;  // 0: ephemeral (see port())
};

// The stock server's side: listen, accept one client, read its record; then
// (after the caller's RTR/RTS) send ours and read "done".
class PingpongServer {
 public:
  // Binds and listens at once. kNotFound (bind address does not resolve),
  // kIo (socket, bind, listen failed; errno kept).
  static Result<std::unique_ptr<PingpongServer>> Create(const PingpongServerOptions& options);
  ~PingpongServer();
  PingpongServer(const PingpongServer&) = delete;
  PingpongServer& operator=(const PingpongServer&) = delete;

  uint16_t port() const { return port_; }
  // "10.99.0.2:40112" of the accepted client; empty before.
  const std::string& peer_address() const { return peer_; }

  // Accepts one client (the listener is then closed, as in the stock server)
  // and reads its 52-byte record. kTimeout, kIo, kProtocol (short record, bad
  // record: see DecodePingpongRecord).
  Result<PingpongRecord> AcceptAndReadPeer(PingpongClock::time_point deadline);
  // Writes our record. REQUIRES: AcceptAndReadPeer() succeeded.
  Result<void> SendOwn(const PingpongRecord& own, PingpongClock::time_point deadline);
  // Reads the client's 5-byte "done". kProtocol if anything else arrives.
  Result<void> ReadDone(PingpongClock::time_point deadline);

 private:
  struct Impl;  // the listener and the connection (socket.cc)
  PingpongServer() = default;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
  std::string peer_;
};

struct PingpongClientOptions {
  std::string host;  // name or numeric address of the server
  uint16_t port = kPingpongDefaultPort;
  // A refused connection (server not listening yet) is retried this often
  // until the deadline (the stock client gives up at once); zero: no retry.
  std::chrono::milliseconds retry_interval{100};
};

// The stock client's side: connect, write our record, read the server's,
// write "done"; the caller then goes to RTR/RTS and sends first.
class PingpongClient {
 public:
  // kInvalidArgument for an empty host. Does not connect yet.
  static Result<std::unique_ptr<PingpongClient>> Create(const PingpongClientOptions& options);
  ~PingpongClient();
  PingpongClient(const PingpongClient&) = delete;
  PingpongClient& operator=(const PingpongClient&) = delete;

  // kNotFound (host does not resolve), kTimeout, kIo (connect failed).
  Result<void> Connect(PingpongClock::time_point deadline);
  Result<void> SendOwn(const PingpongRecord& own, PingpongClock::time_point deadline);
  // kTimeout, kIo, kProtocol (short or bad record).
  Result<PingpongRecord> ReadPeer(PingpongClock::time_point deadline);
  // Writes "done\0" and closes the connection.
  Result<void> SendDone(PingpongClock::time_point deadline);

 private:
  struct Impl;  // the connection (socket.cc)
  explicit PingpongClient(PingpongClientOptions options);
  PingpongClientOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qpconnect::oob
