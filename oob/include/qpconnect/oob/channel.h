// SPDX-License-Identifier: MIT
// The out-of-band protocol over a byte channel the embedding program supplies.
//
// An MPI library, a storage client with its own RPC, or a key-value store
// already moves bytes between the two processes. Hand that to
// CreateChannelExchanger() as two functions, send and receive (no subclass),
// and get the protocol every qpconnect exchanger speaks (docs/oob.md): frames
// (frame.h) with a version check and a length cap checked before any
// allocation, a nonce handshake, the optional pre-shared key (psk.h: key
// confirmation, then encryption), sequence numbers, Barrier(), Abort() and
// PollPeer(). The tcp exchanger is this same
// protocol over a socket, so the two interoperate byte for byte.
//
// Thread-safety: an exchanger is used by one thread at a time. It calls send
// and receive only from the thread that called Exchange(), Barrier() or
// Abort(), one at a time, never concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/exchanger.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

// A reliable, ordered byte stream to the peer, as two functions.
//
// send(bytes, deadline): hands all of `bytes` to the channel, blocking if it
//   must (a full socket buffer) but returning by `deadline`. Each call carries
//   exactly one frame. Returns Ok once every byte is handed over; kTimeout at
//   the deadline; kIo (or any code the channel chooses) if the channel broke.
//   It must complete for a small message (at most kChannelSmallMessageBytes:
//   a hello, a barrier, an abort) while the peer is itself inside send(),
//   because both sides send those before reading the peer's. Large messages
//   (descriptions) are ordered so that one side always reads: SendOrder.
//
// receive(buf, max_bytes, deadline): waits for the peer's next bytes and
//   copies between 1 and max_bytes of them into buf[0, n); returns n. Returns
//   0 at end of stream (the peer closed the channel). Bytes beyond max_bytes
//   stay in the channel for the next call. kTimeout if nothing arrived by
//   `deadline`; kIo (or any code) if the channel broke. REQUIRES (the
//   exchanger's side): 1 <= max_bytes <= 1 MiB, buf holds max_bytes bytes.
//   PollPeer() (during traffic) calls receive() with a deadline that has
//   already passed: return what is there, 0 at end of stream, or kTimeout at
//   once. A channel that can only block still works; it just cannot report a
//   peer gone before the next Barrier().
//
// Errors are values. A returned Error reaches the caller of Exchange() or
// Barrier() with its code, errno and detail; its operation is prefixed with
// "send to <name>" or "receive from <name>", and for kTimeout the detail is
// reworded to say what was awaited. Neither function may throw; one that does
// is caught and reported as kIo, so no exception leaves the exchanger.
//
// Ownership: the exchanger owns the two function objects (and what they
// capture by value). Whatever they refer to (a socket, a communicator, an RPC
// client) must outlive the exchanger; the exchanger never closes it.
struct ByteChannel {
  std::function<Result<void>(std::string_view bytes,
                             std::chrono::steady_clock::time_point deadline)>
      send;
  std::function<Result<size_t>(char* buf, size_t max_bytes,
                               std::chrono::steady_clock::time_point deadline)>
      receive;
};

// The largest message both sides send at once, before either reads: an abort
// frame with the longest reason, sealed (hellos are 28 bytes, confirms 80,
// barriers at most 128). A channel's send() must complete for this much while
// the peer is also sending.
inline constexpr size_t kChannelSmallMessageBytes = 2048;

// Who sends the endpoint description first, once the hellos are exchanged.
// Either side may choose either: the wire is the same.
enum class SendOrder {
  // The side whose nonce sorts lower (memcmp of the two 16-byte hello
  // nonces) sends its description and then receives; the other receives the
  // peer's first, then sends its own. Over a blocking channel one side is
  // always reading, so descriptions of any size (far beyond the channel's
  // buffering) cannot deadlock. Costs one extra one-way delay.
  kLowerNonceFirst,
  // Both sides send, then receive. Only for channels whose send() completes
  // without the peer receiving (a key-value store, a mailbox, a buffered
  // queue): over a socket or a pipe two large descriptions deadlock until the
  // deadline.
  kBothFirst,
};

struct ChannelOptions {
  // Names the channel in every error ("receive from mpi rank 3: ...").
  std::string name = "channel";
  std::optional<Psk> psk;  // both sides need the same key, or neither
  // Declared in every frame; two sides that declare the same role refuse
  // each other (kIncompatible). kNone: no role.
  OobRole role = OobRole::kNone;
  // The most QPs the peer's description may hold; 0: as many as this side
  // publishes. A larger frame is refused before it is read (docs/oob.md).
  uint32_t max_peer_qps = 0;
  // Cap on the payload of a frame the peer may send (64 ..
  // kMaxPayloadBytesLimit). A larger announced length is refused (kProtocol)
  // before anything is allocated for it; the buffer grows only as bytes
  // arrive. This side refuses to send a description above it
  // (kInvalidArgument).
  uint32_t max_payload_bytes = kDefaultMaxPayloadBytes;
  SendOrder order = SendOrder::kLowerNonceFirst;
};

// Builds an exchanger that runs the protocol over `channel`.
//
//   Exchange(local, deadline)  a new session: hellos (fresh nonces), then the
//       descriptions in `order`. Errors as Exchanger::Exchange(); kIo and
//       kTimeout name the channel and what was awaited ("the peer closed the
//       connection mid-message: got 7 of 12 bytes of its hello frame").
//   Barrier(stage, deadline)   both sides send their stage, then read the
//       peer's. REQUIRES: a successful Exchange(), and no failed Barrier()
//       since (kInvalidArgument otherwise).
//   Abort(reason, deadline)    sends an abort message, best effort; the
//       peer's pending or next call fails with kProtocol "the peer aborted:
//       <reason>". Sends nothing before the hellos of an Exchange().
//   PollPeer()                 without waiting: kIo once the peer closed
//       the channel, kProtocol once it aborted (see receive() above).
//
// After a failed call the channel may hold part of a frame: the exchanger
// cannot resynchronise a byte stream, so call Exchange() again only over a
// channel the caller has re-established. Errors of this function:
// kInvalidArgument (send or receive empty, max_payload_bytes out of range).
Result<std::unique_ptr<Exchanger>> CreateChannelExchanger(ByteChannel channel,
                                                          ChannelOptions options = {});

}  // namespace qpconnect::oob
