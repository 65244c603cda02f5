// SPDX-License-Identifier: MIT
// A message session over one long-lived byte stream: the exchangers' frame,
// hello, key schedule and AES-256-GCM sealing (docs/oob.md), for a
// connection that carries many messages both ways for as long as it lives
// (libqpcm's links: every rdma_cm request of a process to one peer, one TCP
// connection). It does no I/O: the caller writes the bytes it returns and
// hands it the bytes it reads. It never blocks, owns no socket, and keeps no
// copy of the input.
//
//   this side                                            the peer
//   Hello()             -- hello: nonce, protocol, version -->
//   [no PSK] AppendMessage() at once, in the same write as the hello
//   Take(): the peer's hello; with a PSK its reply is our confirm, to write
//   Take(): the peer's confirm (with a PSK): CanSend()
//   AppendMessage() ...      -- stream messages -->      Take(): the body
//
// The hello is the exchangers' hello frame with a tail after the nonce: the
// stream's protocol version (2 bytes, big-endian) and its name ("qpcm"). The
// two sides must name the same protocol and version; a mismatch is refused
// naming both, and so is an endpoint exchange's hello (no tail), either way.
//
// Without a PSK a message is a frame of type kStream whose payload is the
// body alone, and messages may follow the hello before the peer's arrives:
// the stream (TCP) keeps them in order, and a binding without a key would
// prove nothing. With a PSK (both sides must hold it, as for the
// exchangers) nothing but the hello and the confirm is sent before the
// peer's confirm verified; then each message is bound (both nonces and a
// sequence number per direction, counting from 0) and sealed under the seal
// key of its direction, derived once: a replayed, reordered, reflected or
// altered message is refused (kAuth). A session seals at most 2^32 messages
// per direction; the caller then starts a new one (a new connection).
//
// Every byte taken is hostile until proved otherwise: a frame's length is
// checked against the cap before the frame is waited for (2 KiB until the
// peer's hello, and with a PSK its confirm; max_message_bytes after), and
// every malformed input yields an Error, never a crash. After an error the
// session is spent: every later Take() returns the same error.
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

struct StreamOptions {
  // The protocol the stream carries: 1 to 32 printable ASCII bytes, no
  // spaces ("qpcm").
  std::string protocol;
  // Its version: the peer must speak the same.
  uint16_t version = 0;
  // Declared in every frame: a client and a server (kNone: none declared);
  // two sides declaring the same role are refused.
  OobRole role = OobRole::kNone;
  // Optional; both sides must have one, or neither.
  std::optional<Psk> psk;
  // Cap on a message body, both ways (64 to kMaxPayloadBytesLimit): the
  // peer's larger frames are refused from their header, ours are not sent.
  uint32_t max_message_bytes = 1u << 20;
  // Names the peer in errors ("tcp 10.0.0.7:40112").
  std::string channel = "peer";
};

// What Take() found at the start of its input.
struct StreamInput {
  enum class Kind {
    kIncomplete,  // not a whole frame yet: read more (nothing consumed)
    kHello,       // the peer's hello, accepted
    kConfirm,     // the peer's confirm (with a PSK), verified: CanSend()
    kMessage,     // a message: `body`
  };
  Kind kind = Kind::kIncomplete;
  // Bytes of the input taken (a whole frame), 0 for kIncomplete.
  size_t consumed = 0;
  // kMessage: the body. It points into the input (no PSK) or into the
  // session (decrypted): valid until the next Take() and while the input is
  // unchanged.
  std::string_view body;
  // kHello with a PSK: this side's confirm, to write before anything else.
  std::string reply;
};

class StreamSession {
 public:
  // Draws this side's nonce and makes its hello. kInvalidArgument (protocol
  // name, cap), kIo (the CSPRNG failed).
  static Result<std::unique_ptr<StreamSession>> Create(StreamOptions options);
  ~StreamSession();
  StreamSession(const StreamSession&) = delete;
  StreamSession& operator=(const StreamSession&) = delete;

  // This side's hello frame: the first bytes to write, once.
  const std::string& Hello() const;

  // Messages may be appended: at once without a PSK; with one, once the
  // peer's confirm verified.
  bool CanSend() const;
  // The peer's hello was accepted.
  bool PeerHelloSeen() const;
  // The peer proved itself: its hello (no PSK) or its confirm (PSK).
  bool Established() const;

  // Appends the frame of `body` to `out` (with a PSK, bound and sealed as the
  // next message of this direction). kInvalidArgument: !CanSend(), a body
  // above max_message_bytes, 2^32 messages sent; kIo (libcrypto). `out` is
  // unchanged on an error.
  Result<void> AppendMessage(std::string_view body, std::string& out);

  // The size of the whole frame that starts `bytes` (header, payload and
  // trailer), or 0 when its header or part of the rest is still to come; it
  // takes nothing. Errors as Take() for a header that is refused.
  Result<size_t> WholeFrameBytes(std::string_view bytes) const;

  // Takes the frame at the start of `bytes`, if all of it is there. Errors:
  //   kProtocol      not a frame (attribute "magic": garbage, HTTP, ...), a
  //                  length above the cap ("length"), a frame out of place
  //                  (a second hello, a message before the hello), malformed
  //   kIncompatible  another frame version, another protocol or version in
  //                  the hello (attribute "version", "protocol"), an
  //                  exchange's hello, both sides declaring one role ("role")
  //   kAuth          a PSK on one side only, a confirm or message that does
  //                  not verify (another key, altered), replayed, reordered
  //                  or reflected messages
  //   kIo            libcrypto failed
  Result<StreamInput> Take(std::string_view bytes);

 private:
  struct Impl;
  explicit StreamSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace qpconnect::oob
