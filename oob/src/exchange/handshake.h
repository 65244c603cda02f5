// SPDX-License-Identifier: MIT
// Handshake: the nonce exchange, message binding, key confirmation and
// encryption shared by every transport. Private to src/exchange.
//
// A session starts with Begin(), which draws this side's nonce. When both
// sides exchange hellos (always for tcp, file and channels; for stdio only
// with a PSK), later messages are bound: their payload starts with
//   sender nonce (16) || receiver nonce (16) || sequence number (4, big-endian)
// With a PSK, keys are derived per purpose and direction:
//   HKDF-SHA256(ikm = PSK, salt = lower nonce || higher nonce,
//               info = "qpconnect-oob-v2 <confirm|seal> <lo>hi|hi>lo>")
// where the direction is "lo>hi" when the sender's nonce sorts (memcmp) below
// the receiver's. Each side proves it holds the key with a confirm frame
// (binding, sequence 0, and a trailer HMAC-SHA256(confirm key, header ||
// payload)) and sends nothing else until the peer's confirm verified. Every
// later message is sealed with AES-256-GCM under the seal key of its
// direction: IV = type (1) || 7 zero bytes || sequence number (4), additional
// data = frame header || binding, the binding in clear, the ciphertext after
// it and the 16-byte tag as the trailer. Unbound messages (stdio without PSK)
// carry the body alone.
//
// A message stream (stream_session.h) uses the same session: its hello
// carries a tail after the nonce (the stream's protocol and version), and
// with a PSK its messages are sealed as above by SealNext()/OpenNext(), in
// order, one counter per direction (a stream carries millions of them).
//
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

inline constexpr size_t kBindingBytes = 2 * kNonceBytes + 4;

struct Binding {
  Nonce sender{};
  Nonce receiver{};
  uint32_t seq = 0;
};

// The binding at the start of a bound frame's payload; nullopt if the frame is
// not bound or too short.
std::optional<Binding> PeekBinding(const Frame& frame);
std::optional<Binding> PeekBinding(uint8_t flags, std::string_view payload);

// A Handshake's messages sealed and opened in order (SealNext, OpenNext):
// their type, the next sequence number of each direction (2^32 once
// exhausted), the keys.
struct InOrder {
  FrameType type = FrameType::kStream;
  uint64_t next_send = 0;
  uint64_t next_recv = 0;
  bool keyed = false;
  SecretKey send_key{};
  SecretKey recv_key{};
};

class Handshake {
 public:
  // `psk` may be empty (no integrity check, no secrecy). `role` is declared in
  // every frame this side sends (kNone: none).
  explicit Handshake(std::optional<Psk> psk, OobRole role = OobRole::kNone)
      : psk_(std::move(psk)), role_(role) {}
  ~Handshake();
  Handshake(const Handshake&) = delete;
  Handshake& operator=(const Handshake&) = delete;

  // Starts a new session: draws a fresh nonce, forgets the peer's. kIo if the
  // CSPRNG fails.
  Result<void> Begin();

  bool has_psk() const { return psk_.has_value(); }
  OobRole role() const { return role_; }
  const Nonce& my_nonce() const { return my_nonce_; }
  const std::optional<Nonce>& peer_nonce() const { return peer_nonce_; }
  void set_peer_nonce(const Nonce& n) { peer_nonce_ = n; }
  void set_channel(std::string channel) { channel_ = std::move(channel); }

  // This side's hello frame (its nonce, then `tail`: a message stream's
  // protocol and version, empty for an exchange; kFrameFlagPsk if it has a
  // key).
  std::string EncodeHello(std::string_view tail = {}) const;

  // Checks the peer's first frame is a hello compatible with this side (both
  // or neither have a PSK, no role clash) and records its nonce. Errors:
  // kAuth (PSK on one side only; the peer echoed our nonce), kIncompatible
  // (both sides declare the same role), kProtocol (not a hello, bad size).
  // With `psk_mismatch`, a hello whose PSK flag disagrees with this side is
  // accepted and the disagreement described there (empty if none) instead:
  // for a channel whose hello may be an earlier run's (file). With
  // `with_tail`, the payload may go on after the nonce (a message stream's
  // hello; the caller checks the tail); without, such a hello is refused as
  // a message stream's.
  Result<void> AcceptHello(const Frame& frame, std::string* psk_mismatch = nullptr,
                           bool with_tail = false);

  // True when this side's nonce sorts below the peer's (memcmp): it sends its
  // description first under SendOrder::kLowerNonceFirst. REQUIRES:
  // peer_nonce() is set.
  bool SortsBelowPeer() const;

  // kIncompatible when a frame's `flags` declare the role this side declares
  // (two clients, two servers), naming it; Ok otherwise.
  Result<void> CheckRole(uint8_t flags) const;

  // The confirm frame: proof that this side holds the PSK, bound to both
  // nonces. REQUIRES: has_psk() and peer_nonce() set.
  Result<std::string> SealConfirm();

  // Frame bytes carrying `body` as message `seq` of this direction: bound when
  // the peer's nonce is known; with a PSK, encrypted and authenticated
  // (AES-256-GCM). kInvalidArgument (a bug: never on the wire) if the same
  // type and sequence number were already sealed for this peer nonce in this
  // session, or `type` is sealed in order (SealNext), which would reuse an
  // AEAD key/IV pair.
  // REQUIRES: peer_nonce() is set if has_psk().
  Result<std::string> Seal(FrameType type, std::string_view body, uint32_t seq);

  // Messages of one type sealed and opened in order, for a long-lived
  // stream: each direction's sequence numbers count from 0, checked with one
  // counter each (O(1) however many messages), under seal keys derived once.
  //
  // SealNext appends the frame of `body` as this direction's next message of
  // `type` (bound, sealed) to `out`. kInvalidArgument (a bug guard, never on
  // the wire): no PSK or no peer nonce yet; another type than the first
  // SealNext's, or one Seal() used in this session; 2^32 messages sealed
  // already (the stream must start a new session); kIo (libcrypto).
  Result<void> SealNext(FrameType type, std::string_view body, std::string& out);
  // The body of the peer's next message of `type`: `bytes` is exactly one
  // whole frame, whose header `header` is (DecodeFrameHeader's), sealed.
  // Errors as Open(): kAuth (not sealed, tag wrong, bound to other nonces,
  // replayed or reordered), kIncompatible (role clash), kProtocol (wrong
  // type, malformed). REQUIRES: has_psk(), peer_nonce() set.
  Result<std::string> OpenNext(std::string_view bytes, const FrameHeader& header, FrameType type);

  // An early abort: an abort frame bound to this side's nonce only (the
  // receiver nonce all zero, sequence 0), for a side that gives up after its
  // hello went out but before the peer's arrived (docs/oob.md, "Abort before
  // the peer's hello"). It carries `reason` without a PSK and no reason with
  // one (no key is agreed yet to seal it).
  std::string EncodeEarlyAbort(std::string_view reason) const;

  // The peer's early abort as its error (kProtocol "the peer aborted: ..."),
  // once the peer's nonce is known: an unsealed abort frame whose binding
  // names the peer's nonce as sender and an all-zero receiver. nullopt for
  // any other frame. With a PSK a reason it carries is not shown: nothing
  // authenticates it.
  std::optional<Error> OpenEarlyAbort(const Frame& frame) const;

  // Checks `frame` is message `seq` of type `expected` from the peer and
  // returns its body (decrypted). With `learn_peer_nonce`, accepts any sender
  // nonce and records it once the message verified (the file exchanger learns
  // it from the bound confirm, or without a PSK from the description). An
  // abort message is accepted with any sequence number (it ends the session),
  // and yields kProtocol "the peer aborted: <reason>". `expected` kConfirm
  // checks the key confirmation.
  // Errors: kAuth (confirmation or AEAD tag wrong, not encrypted, PSK on one
  // side only, bound to another session's nonces, out of sequence),
  // kIncompatible (role clash), kProtocol (wrong type, the peer aborted,
  // malformed binding).
  Result<std::string> Open(const Frame& frame, FrameType expected, uint32_t seq,
                           bool learn_peer_nonce = false);

 private:
  Error AuthError(std::string detail) const;
  Error ProtocolError(std::string detail, std::string attribute = {}) const;
  // Open()'s checks of a frame's type and flags against this side's key and
  // nonces, before any cryptography.
  Result<void> CheckFlags(FrameType type, uint8_t flags, bool learn_peer_nonce) const;
  // Open()'s checks of a verified binding: our nonce as receiver, the peer's
  // as sender, sequence number `seq` (but for an abort).
  Result<void> CheckBinding(const Binding& b, FrameType type, uint32_t seq,
                            bool learn_peer_nonce) const;
  // Starts (or continues) the in-order messages of `type`, refusing what
  // would reuse an IV (see SealNext), and derives their keys once.
  Result<void> BeginInOrder(FrameType type);
  Result<void> StreamKeys();
  // The key for `purpose` ("confirm", "seal") of messages from `sender` to
  // `receiver`. REQUIRES: has_psk().
  Result<SecretKey> DeriveKey(std::string_view purpose, const Nonce& sender,
                              const Nonce& receiver) const;

  std::optional<Psk> psk_;
  OobRole role_;
  std::string channel_ = "peer";
  Nonce my_nonce_{};
  std::optional<Nonce> peer_nonce_;
  // (peer nonce, type, sequence number) of every message sealed under this
  // session's nonce: an AEAD key/IV pair is never used twice.
  std::vector<std::tuple<Nonce, FrameType, uint32_t>> sealed_;
  // The in-order stream (SealNext, OpenNext).
  std::optional<InOrder> in_order_;
  void WipeInOrder();
};

// Helpers shared by the exchangers.
std::string NonceHex(const Nonce& n);

// "300 ms", for timeout messages.
std::string MsText(std::chrono::steady_clock::duration d);

// `s` cut to `max` bytes with non-printable bytes as '?', for quoting
// peer-supplied text in an error.
std::string Printable(std::string_view s, size_t max = 200);

// kInvalidArgument unless 64 <= cap <= kMaxPayloadBytesLimit; `who` names the
// options ("tcp exchanger options").
Result<void> CheckPayloadCap(uint32_t cap, const std::string& who);

// The codec bytes of `local` after checking its ranges (kInvalidArgument with
// the codec's detail if this side's own description cannot be sent).
Result<std::string> EncodeLocal(const EndpointInfo& local);

// The peer's description from a frame body. The codec's error passes through
// with its code; the operation names `channel`.
Result<EndpointInfo> DecodePeer(std::string_view body, const std::string& channel);

// Validates a barrier stage name (1..64 printable ASCII bytes, spaces
// allowed). kInvalidArgument.
Result<void> CheckStage(std::string_view stage);

// Checks a barrier body against `stage`: kProtocol naming both on a mismatch.
Result<void> MatchStage(std::string_view body, std::string_view stage, const std::string& channel);
Error MakeError(ErrorCode code, std::string operation, std::string detail,
                std::string attribute = {});

}  // namespace qpconnect::oob::internal
