// Session: the nonce handshake, message binding and PSK check shared by the
// tcp, file and stdio exchangers. Private to src/exchange.
//
// A session starts with Begin(), which draws this side's nonce. When both
// sides exchange hellos (always for tcp and file; for stdio only with a PSK),
// later messages are bound: their payload starts with
//   sender nonce (16) || receiver nonce (16) || sequence number (4, big-endian)
// and, with a PSK, carry an HMAC-SHA256 trailer over
//   "qpconnect-oob-v1" || direction label || frame header || payload
// where the direction label is "lo>hi" when the sender's nonce sorts below the
// receiver's, "hi>lo" otherwise. Unbound messages (stdio without PSK) carry the
// body alone.
//
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

class Session {
 public:
  // `psk` may be empty (no integrity check). `channel` names the channel in
  // error messages ("tcp 10.0.0.7:18515", "file /dir/s.b.qpc", "stdio").
  explicit Session(std::optional<Psk> psk) : psk_(std::move(psk)) {}

  // Starts a new session: draws a fresh nonce, forgets the peer's. kIo if the
  // CSPRNG fails.
  Result<void> Begin();

  bool has_psk() const { return psk_.has_value(); }
  const Nonce& my_nonce() const { return my_nonce_; }
  const std::optional<Nonce>& peer_nonce() const { return peer_nonce_; }
  void set_peer_nonce(const Nonce& n) { peer_nonce_ = n; }
  void set_channel(std::string channel) { channel_ = std::move(channel); }

  // This side's hello frame (its nonce; kFrameFlagPsk if it has a key).
  std::string EncodeHello() const;

  // Checks the peer's first frame is a hello compatible with this side (both
  // or neither have a PSK) and records its nonce. Errors: kAuth (PSK on one
  // side only; the peer echoed our nonce), kProtocol (not a hello, bad size).
  // With `psk_mismatch`, a hello whose PSK flag disagrees with this side is
  // accepted and the disagreement described there (empty if none) instead:
  // for a channel whose hello may be an earlier run's (file).
  Result<void> AcceptHello(const Frame& frame, std::string* psk_mismatch = nullptr);

  // True when this side's nonce sorts below the peer's (memcmp): it sends its
  // description first under SendOrder::kLowerNonceFirst. REQUIRES:
  // peer_nonce() is set.
  bool SortsBelowPeer() const;

  // Frame bytes carrying `body` as message `seq` of this direction: bound when
  // the peer's nonce is known, with a MAC when there is a PSK.
  // REQUIRES: peer_nonce() is set if has_psk().
  Result<std::string> Seal(FrameType type, std::string_view body, uint32_t seq) const;

  // Checks `frame` is message `seq` of type `expected` from the peer and
  // returns its body. With `learn_peer_nonce`, accepts any sender nonce and
  // records it (the file exchanger learns it from the bound description). An
  // abort message is accepted with any sequence number (it ends the session),
  // and yields kProtocol "the peer aborted: <reason>".
  // Errors: kAuth (MAC missing or wrong, PSK on one side only, bound to another
  // session's nonces, out of sequence), kProtocol (wrong type, the peer
  // aborted, malformed binding).
  Result<std::string> Open(const Frame& frame, FrameType expected, uint32_t seq,
                           bool learn_peer_nonce = false);

 private:
  Error AuthError(std::string detail) const;
  Error ProtocolError(std::string detail, std::string attribute = {}) const;

  std::optional<Psk> psk_;
  std::string channel_ = "peer";
  Nonce my_nonce_{};
  std::optional<Nonce> peer_nonce_;
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
