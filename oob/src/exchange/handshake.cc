// SPDX-License-Identifier: MIT
#include "handshake.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

#include "qpconnect/oob/codec.h"

namespace qpconnect::oob::internal {
namespace {

constexpr std::string_view kKdfLabel = "qpconnect-oob-v2 ";

std::string_view AsView(const Nonce& n) {
  return {reinterpret_cast<const char*>(n.data()), n.size()};
}

bool SortsBelow(const Nonce& a, const Nonce& b) {
  return std::memcmp(a.data(), b.data(), a.size()) < 0;
}

std::string_view DirectionLabel(const Nonce& sender, const Nonce& receiver) {
  return SortsBelow(sender, receiver) ? "lo>hi" : "hi>lo";
}

std::string EncodeBinding(const Binding& b) {
  std::string out;
  out.reserve(kBindingBytes);
  out += AsView(b.sender);
  out += AsView(b.receiver);
  out += static_cast<char>((b.seq >> 24) & 0xff);
  out += static_cast<char>((b.seq >> 16) & 0xff);
  out += static_cast<char>((b.seq >> 8) & 0xff);
  out += static_cast<char>(b.seq & 0xff);
  return out;
}

// "a barrier", "an endpoint".
std::string A(FrameType t) {
  const std::string name = FrameTypeName(t);
  return (name[0] == 'a' || name[0] == 'e' ? "an " : "a ") + name;
}

// The AEAD IV of message `seq` of `type`: type || 7 zero bytes || seq.
AeadIv IvOf(FrameType type, uint32_t seq) {
  AeadIv iv{};
  iv[0] = static_cast<uint8_t>(type);
  iv[8] = static_cast<uint8_t>(seq >> 24);
  iv[9] = static_cast<uint8_t>(seq >> 16);
  iv[10] = static_cast<uint8_t>(seq >> 8);
  iv[11] = static_cast<uint8_t>(seq);
  return iv;
}

std::string_view KeyView(const SecretKey& k) {
  return {reinterpret_cast<const char*>(k.data()), k.size()};
}

// Wipes a derived key when it goes out of scope.
struct KeyWiper {
  SecretKey& key;
  ~KeyWiper() { WipeSecret(key.data(), key.size()); }
};

}  // namespace

Error MakeError(ErrorCode code, std::string operation, std::string detail, std::string attribute) {
  Error e;
  e.code = code;
  e.operation = std::move(operation);
  e.detail = std::move(detail);
  e.attribute = std::move(attribute);
  return e;
}

std::string Printable(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (s.size() > max) out += "...";
  return out;
}

std::string MsText(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

Result<void> CheckPayloadCap(uint32_t cap, const std::string& who) {
  if (cap < 64 || cap > kMaxPayloadBytesLimit) {
    return MakeError(
        ErrorCode::kInvalidArgument, who,
        "max_payload_bytes must be between 64 and " + std::to_string(kMaxPayloadBytesLimit));
  }
  return Ok();
}

std::string NonceHex(const Nonce& n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : n) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::optional<Binding> PeekBinding(const Frame& frame) {
  return PeekBinding(frame.flags, frame.payload);
}

std::optional<Binding> PeekBinding(uint8_t flags, std::string_view payload) {
  if ((flags & kFrameFlagBound) == 0 || payload.size() < kBindingBytes) {
    return std::nullopt;
  }
  Binding b;
  std::memcpy(b.sender.data(), payload.data(), kNonceBytes);
  std::memcpy(b.receiver.data(), payload.data() + kNonceBytes, kNonceBytes);
  const auto* s = reinterpret_cast<const unsigned char*>(payload.data() + 2 * kNonceBytes);
  b.seq = (uint32_t{s[0]} << 24) | (uint32_t{s[1]} << 16) | (uint32_t{s[2]} << 8) | uint32_t{s[3]};
  return b;
}

Handshake::~Handshake() { WipeInOrder(); }

void Handshake::WipeInOrder() {
  if (in_order_) {
    WipeSecret(in_order_->send_key.data(), in_order_->send_key.size());
    WipeSecret(in_order_->recv_key.data(), in_order_->recv_key.size());
  }
  in_order_.reset();
}

Result<void> Handshake::Begin() {
  auto n = RandomNonce();
  if (!n) return std::move(n).error();
  my_nonce_ = *n;
  peer_nonce_.reset();
  sealed_.clear();  // a new nonce of ours: every key is new
  WipeInOrder();
  return Ok();
}

Result<SecretKey> Handshake::DeriveKey(std::string_view purpose, const Nonce& sender,
                                       const Nonce& receiver) const {
  const bool lo = SortsBelow(sender, receiver);
  std::string salt;
  salt += AsView(lo ? sender : receiver);
  salt += AsView(lo ? receiver : sender);
  std::string info(kKdfLabel);
  info += purpose;
  info += ' ';
  info += DirectionLabel(sender, receiver);
  const auto& key = psk_->bytes();
  return HkdfSha256(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()), salt,
                    info);
}

Result<void> Handshake::CheckRole(uint8_t flags) const {
  const OobRole peer = RoleOfFlags(flags);
  if (role_ == OobRole::kNone || peer != role_) return Ok();
  const std::string name = OobRoleName(role_);
  return MakeError(ErrorCode::kIncompatible, "exchange with " + channel_,
                   "both sides declare the role '" + name + "': one side must be the " +
                       (role_ == OobRole::kClient ? "server" : "client") +
                       " (nothing was sent but the handshake; nothing is connected)",
                   "role");
}

Error Handshake::AuthError(std::string detail) const {
  return MakeError(ErrorCode::kAuth, "authenticate message from " + channel_, std::move(detail));
}

Error Handshake::ProtocolError(std::string detail, std::string attribute) const {
  return MakeError(ErrorCode::kProtocol, "receive from " + channel_, std::move(detail),
                   std::move(attribute));
}

std::string Handshake::EncodeHello(std::string_view tail) const {
  Frame f;
  f.type = FrameType::kHello;
  f.flags = static_cast<uint8_t>((psk_ ? kFrameFlagPsk : 0) | RoleFlags(role_));
  f.payload.assign(AsView(my_nonce_));
  f.payload += tail;
  return EncodeFrame(f);
}

bool Handshake::SortsBelowPeer() const { return SortsBelow(my_nonce_, *peer_nonce_); }

Result<void> Handshake::AcceptHello(const Frame& frame, std::string* psk_mismatch, bool with_tail) {
  if (frame.type != FrameType::kHello) {
    if ((frame.flags & (kFrameFlagMac | kFrameFlagSealed)) != 0 && !psk_) {
      return AuthError(
          "the peer authenticates its messages with a PSK, but none is configured "
          "on this side");
    }
    if (psk_ && (frame.flags & kFrameFlagBound) == 0) {
      return AuthError(std::string("expected the peer's nonce (hello), got an unauthenticated ") +
                       FrameTypeName(frame.type) + " message: is a PSK configured on the peer?");
    }
    return ProtocolError("expected the peer's hello, got " + A(frame.type) + " message");
  }
  constexpr uint8_t kHelloFlags = kFrameFlagPsk | kFrameFlagRoleClient | kFrameFlagRoleServer;
  if (!with_tail && (frame.flags & ~kHelloFlags) == 0 && frame.payload.size() > kNonceBytes + 2) {
    // A message stream's hello: nonce, version (2), protocol name.
    return MakeError(ErrorCode::kIncompatible, "exchange with " + channel_,
                     "the peer's hello opens a '" +
                         Printable(std::string_view(frame.payload).substr(kNonceBytes + 2), 32) +
                         "' message stream (as libqpcm's links do), not an endpoint exchange",
                     "protocol");
  }
  if ((frame.flags & ~kHelloFlags) != 0 || frame.payload.size() < kNonceBytes ||
      (!with_tail && frame.payload.size() != kNonceBytes)) {
    return ProtocolError("malformed hello: " + std::to_string(frame.payload.size()) +
                         " payload bytes, flags " + std::to_string(frame.flags));
  }
  QPC_TRY(CheckRole(frame.flags));
  const bool peer_psk = (frame.flags & kFrameFlagPsk) != 0;
  if (psk_mismatch != nullptr) {  // the hello is only a hint
    psk_mismatch->clear();
    if (peer_psk && !psk_) {
      *psk_mismatch =
          "the peer's hello says it requires a pre-shared key, but none is configured on this side";
    } else if (!peer_psk && psk_) {
      *psk_mismatch = "this side requires a pre-shared key, but the peer's hello says it has none";
    }
  } else if (peer_psk && !psk_) {
    return AuthError("the peer requires a pre-shared key, but none is configured on this side");
  } else if (!peer_psk && psk_) {
    return AuthError("this side requires a pre-shared key, but the peer has none configured");
  }
  Nonce n{};
  std::memcpy(n.data(), frame.payload.data(), n.size());
  if (n == my_nonce_) {
    return AuthError("the peer's nonce equals ours: our own hello was reflected back");
  }
  peer_nonce_ = n;
  return Ok();
}

Result<std::string> Handshake::SealConfirm() {
  if (!psk_ || !peer_nonce_) {
    return MakeError(ErrorCode::kInvalidArgument, "seal confirm for " + channel_,
                     "key confirmation needs a PSK and the peer's nonce");
  }
  Frame f;
  f.type = FrameType::kConfirm;
  f.flags = static_cast<uint8_t>(kFrameFlagBound | kFrameFlagMac | RoleFlags(role_));
  f.payload = EncodeBinding(Binding{my_nonce_, *peer_nonce_, 0});
  auto key = DeriveKey("confirm", my_nonce_, *peer_nonce_);
  if (!key) return std::move(key).error();
  KeyWiper wipe{*key};
  const std::string header =
      EncodeFrameHeader(f.type, f.flags, static_cast<uint32_t>(f.payload.size()));
  auto mac = HmacSha256(KeyView(*key), {header, f.payload});
  if (!mac) return std::move(mac).error();
  f.mac.assign(reinterpret_cast<const char*>(mac->data()), mac->size());
  return EncodeFrame(f);
}

std::string Handshake::EncodeEarlyAbort(std::string_view reason) const {
  Frame f;
  f.type = FrameType::kAbort;
  f.flags = static_cast<uint8_t>(kFrameFlagBound | RoleFlags(role_));
  f.payload = EncodeBinding(Binding{my_nonce_, Nonce{}, 0});
  if (!psk_) f.payload += reason;
  return EncodeFrame(f);
}

std::optional<Error> Handshake::OpenEarlyAbort(const Frame& frame) const {
  const uint8_t unsealed = kFrameFlagMac | kFrameFlagSealed | kFrameFlagPsk;
  if (frame.type != FrameType::kAbort || (frame.flags & kFrameFlagBound) == 0 ||
      (frame.flags & unsealed) != 0 || !peer_nonce_) {
    return std::nullopt;
  }
  const auto b = PeekBinding(frame);
  if (!b || b->receiver != Nonce{} || b->sender != *peer_nonce_ || b->seq != 0) {
    return std::nullopt;
  }
  if (psk_) {
    return ProtocolError(
        "the peer aborted before the key confirmation (its reason is not sent before a key is "
        "agreed)");
  }
  return ProtocolError("the peer aborted: " +
                       Printable(std::string_view(frame.payload).substr(kBindingBytes)));
}

Result<std::string> Handshake::Seal(FrameType type, std::string_view body, uint32_t seq) {
  Frame f;
  f.type = type;
  f.flags = RoleFlags(role_);
  if (peer_nonce_) {
    f.flags |= kFrameFlagBound;
    f.payload = EncodeBinding(Binding{my_nonce_, *peer_nonce_, seq});
  }
  if (!psk_) {
    f.payload += body;
    return EncodeFrame(f);
  }
  if (!peer_nonce_) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     "no peer nonce: a PSK needs the hello exchange first");
  }
  if (in_order_ && in_order_->type == type) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     std::string(FrameTypeName(type)) +
                         " messages are sealed in order in this session (SealNext): refusing "
                         "to reuse an AEAD IV");
  }
  const auto used = std::make_tuple(*peer_nonce_, type, seq);
  if (std::find(sealed_.begin(), sealed_.end(), used) != sealed_.end()) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     std::string("a ") + FrameTypeName(type) + " message with sequence number " +
                         std::to_string(seq) +
                         " was sealed already in this session: refusing to reuse an AEAD IV");
  }
  f.flags |= kFrameFlagSealed;
  const size_t payload_bytes = f.payload.size() + body.size();
  if (payload_bytes > UINT32_MAX) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     "message too large for a frame");
  }
  const std::string header =
      EncodeFrameHeader(f.type, f.flags, static_cast<uint32_t>(payload_bytes));
  auto key = DeriveKey("seal", my_nonce_, *peer_nonce_);
  if (!key) return std::move(key).error();
  KeyWiper wipe{*key};
  auto sealed = AeadSeal(*key, IvOf(type, seq), header + f.payload, body);
  if (!sealed) return std::move(sealed).error();
  sealed_.push_back(used);
  f.payload.append(*sealed, 0, body.size());
  f.mac.assign(*sealed, body.size(), kAeadTagBytes);
  return EncodeFrame(f);
}

Result<void> Handshake::CheckFlags(FrameType type, uint8_t flags, bool learn_peer_nonce) const {
  if (type == FrameType::kHello) return ProtocolError("a second hello from the peer", "type");
  QPC_TRY(CheckRole(flags));
  const bool has_mac = (flags & kFrameFlagMac) != 0;
  const bool sealed = (flags & kFrameFlagSealed) != 0;
  const bool bound = (flags & kFrameFlagBound) != 0;
  const bool confirm = type == FrameType::kConfirm;
  if (!psk_ && (has_mac || sealed || confirm)) {
    return AuthError(
        "the peer authenticates and encrypts its messages with a pre-shared key, but none is "
        "configured on this side");
  }
  if (psk_ && confirm && (!has_mac || !bound)) {
    return ProtocolError("malformed confirm message: no binding or no MAC", "flags");
  }
  if (psk_ && !confirm && !sealed) {
    return AuthError(std::string("the peer's ") + FrameTypeName(type) +
                     " message is not encrypted and authenticated: is a PSK configured on the "
                     "peer?");
  }
  if (psk_ && !confirm && has_mac) {
    return ProtocolError(std::string("a MAC trailer on ") + A(type) + " message", "flags");
  }
  if ((flags & kFrameFlagPsk) != 0) {
    return ProtocolError("flag 'psk' on a non-hello message", "flags");
  }
  const bool want_bound = peer_nonce_.has_value() || learn_peer_nonce || psk_.has_value();
  if (bound != want_bound) {
    if (!bound && psk_) return AuthError("the peer's message is not bound to the session nonces");
    return ProtocolError(bound ? "unexpected session binding: the peer ran a nonce handshake "
                                 "this side did not"
                               : "the peer's message lacks the session binding",
                         "flags");
  }
  return Ok();
}

Result<void> Handshake::CheckBinding(const Binding& b, FrameType type, uint32_t seq,
                                     bool learn_peer_nonce) const {
  if (b.receiver != my_nonce_) {
    return AuthError(std::string("the peer's ") + FrameTypeName(type) +
                     " message is bound to nonce " + NonceHex(b.receiver) +
                     ", not this session's " + NonceHex(my_nonce_) +
                     ": a replayed or stale message from another session");
  }
  if (peer_nonce_ && !learn_peer_nonce && b.sender != *peer_nonce_) {
    return AuthError(std::string("the peer's ") + FrameTypeName(type) +
                     " message comes from session " + NonceHex(b.sender) + ", not the peer's " +
                     NonceHex(*peer_nonce_) + ": a message replayed from another session");
  }
  if (b.sender == my_nonce_) {
    return AuthError("the message carries our own nonce as its sender: reflected back");
  }
  if (b.seq != seq && type != FrameType::kAbort) {
    return AuthError("message sequence number " + std::to_string(b.seq) + ", expected " +
                     std::to_string(seq) + ": replayed or reordered");
  }
  return Ok();
}

Result<std::string> Handshake::Open(const Frame& frame, FrameType expected, uint32_t seq,
                                    bool learn_peer_nonce) {
  if (frame.type == FrameType::kHello) {
    if ((frame.flags & kFrameFlagPsk) != 0 && !psk_) {
      return AuthError(
          "the peer requires a pre-shared key (it sent a nonce hello), but none is "
          "configured on this side");
    }
    return ProtocolError("expected " + A(expected) + " message, got a hello");
  }
  QPC_TRY(CheckFlags(frame.type, frame.flags, learn_peer_nonce));
  const bool confirm = frame.type == FrameType::kConfirm;
  std::string body;
  if ((frame.flags & kFrameFlagBound) == 0) {
    body = frame.payload;
  } else {
    auto b = PeekBinding(frame);
    if (!b) {
      return ProtocolError("bound message shorter than its " + std::to_string(kBindingBytes) +
                           "-byte binding");
    }
    if (psk_) {
      const std::string header =
          EncodeFrameHeader(frame.type, frame.flags, static_cast<uint32_t>(frame.payload.size()));
      if (confirm) {
        if (frame.payload.size() != kBindingBytes) {
          return ProtocolError(
              "malformed confirm message: " + std::to_string(frame.payload.size()) +
                  " payload bytes, not " + std::to_string(kBindingBytes),
              "length");
        }
        auto key = DeriveKey("confirm", b->sender, b->receiver);
        if (!key) return std::move(key).error();
        KeyWiper wipe{*key};
        auto mac = HmacSha256(KeyView(*key), {header, frame.payload});
        if (!mac) return std::move(mac).error();
        if (!MacEqual(frame.mac,
                      std::string_view(reinterpret_cast<const char*>(mac->data()), mac->size()))) {
          return AuthError(
              "key confirmation failed: the peer's confirm message does not verify under our "
              "pre-shared key (the peer holds another key, or claims one it lacks, or the "
              "message was altered in transit); nothing was disclosed to it");
        }
      } else {
        auto key = DeriveKey("seal", b->sender, b->receiver);
        if (!key) return std::move(key).error();
        KeyWiper wipe{*key};
        const std::string_view payload = frame.payload;
        auto plain = AeadOpen(*key, IvOf(frame.type, b->seq),
                              header + std::string(payload.substr(0, kBindingBytes)),
                              std::string(payload.substr(kBindingBytes)) + frame.mac);
        if (!plain) {
          if (plain.error().code != ErrorCode::kAuth) return std::move(plain).error();
          return AuthError(std::string("the peer's ") + FrameTypeName(frame.type) +
                           " message does not decrypt and verify (AES-256-GCM): the peer's PSK "
                           "differs from ours, or the message was altered in transit");
        }
        body = std::move(*plain);
      }
    } else {
      body.assign(frame.payload, kBindingBytes);
    }
    QPC_TRY(CheckBinding(*b, frame.type, seq, learn_peer_nonce));
    if (learn_peer_nonce) peer_nonce_ = b->sender;
  }
  if (frame.type == FrameType::kAbort && expected != FrameType::kAbort) {
    return ProtocolError("the peer aborted: " + Printable(body));
  }
  if (frame.type != expected) {
    return ProtocolError("expected " + A(expected) + " message, got " + A(frame.type) + " message",
                         "type");
  }
  return body;
}

Result<void> Handshake::StreamKeys() {
  if (!psk_ || !peer_nonce_) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     "a sealed stream needs a PSK and the peer's nonce");
  }
  if (in_order_->keyed) return Ok();
  auto send = DeriveKey("seal", my_nonce_, *peer_nonce_);
  if (!send) return std::move(send).error();
  KeyWiper wipe_send{*send};
  auto recv = DeriveKey("seal", *peer_nonce_, my_nonce_);
  if (!recv) return std::move(recv).error();
  KeyWiper wipe_recv{*recv};
  in_order_->send_key = *send;
  in_order_->recv_key = *recv;
  in_order_->keyed = true;
  return Ok();
}

Result<void> Handshake::BeginInOrder(FrameType type) {
  if (!in_order_) {
    // One type per session, and not one Seal() used: its IVs are the same.
    for (const auto& used : sealed_) {
      if (std::get<1>(used) == type) {
        return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                         std::string(FrameTypeName(type)) +
                             " messages were sealed out of order in this session: refusing to "
                             "reuse an AEAD IV");
      }
    }
    in_order_.emplace();
    in_order_->type = type;
  }
  if (in_order_->type != type) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     std::string("this session seals ") + FrameTypeName(in_order_->type) +
                         " messages in order, not " + FrameTypeName(type));
  }
  return StreamKeys();
}

Result<void> Handshake::SealNext(FrameType type, std::string_view body, std::string& out) {
  QPC_TRY(BeginInOrder(type));
  if (in_order_->next_send > UINT32_MAX) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     "2^32 messages sealed in this session: its sequence numbers are used up "
                     "(start a new session)");
  }
  const auto seq = static_cast<uint32_t>(in_order_->next_send);
  const size_t payload_bytes = kBindingBytes + body.size();
  if (payload_bytes > UINT32_MAX) {
    return MakeError(ErrorCode::kInvalidArgument, "seal message for " + channel_,
                     "message too large for a frame");
  }
  const auto flags = static_cast<uint8_t>(kFrameFlagBound | kFrameFlagSealed | RoleFlags(role_));
  // Header and binding go to `out` as they are: the additional data.
  const size_t at = out.size();
  out += EncodeFrameHeader(type, flags, static_cast<uint32_t>(payload_bytes));
  out += EncodeBinding(Binding{my_nonce_, *peer_nonce_, seq});
  auto sealed =
      AeadSeal(in_order_->send_key, IvOf(type, seq), std::string_view(out).substr(at), body);
  if (!sealed) {
    out.resize(at);
    return std::move(sealed).error();
  }
  out += *sealed;  // the ciphertext, then the tag: the trailer
  ++in_order_->next_send;
  return Ok();
}

Result<std::string> Handshake::OpenNext(std::string_view bytes, const FrameHeader& header,
                                        FrameType type) {
  QPC_TRY(BeginInOrder(type));
  QPC_TRY(CheckFlags(header.type, header.flags, false));
  if (header.type != type) {
    return ProtocolError("expected " + A(type) + " message, got " + A(header.type) + " message",
                         "type");
  }
  const std::string_view payload = bytes.substr(kFrameHeaderBytes, header.payload_bytes);
  auto b = PeekBinding(header.flags, payload);
  if (!b) {
    return ProtocolError("bound message shorter than its " + std::to_string(kBindingBytes) +
                         "-byte binding");
  }
  // The additional data (header, binding) and the ciphertext and tag lie
  // contiguous in the frame: opened in place.
  auto plain = AeadOpen(in_order_->recv_key, IvOf(header.type, b->seq),
                        bytes.substr(0, kFrameHeaderBytes + kBindingBytes),
                        bytes.substr(kFrameHeaderBytes + kBindingBytes));
  if (!plain) {
    if (plain.error().code != ErrorCode::kAuth) return std::move(plain).error();
    return AuthError(std::string("the peer's ") + FrameTypeName(header.type) +
                     " message does not decrypt and verify (AES-256-GCM): the peer's PSK "
                     "differs from ours, or the message was altered in transit");
  }
  if (in_order_->next_recv > UINT32_MAX) {
    return AuthError("a message after the 2^32 of this session: replayed");
  }
  QPC_TRY(CheckBinding(*b, header.type, static_cast<uint32_t>(in_order_->next_recv), false));
  ++in_order_->next_recv;
  return plain;
}

Result<std::string> EncodeLocal(const EndpointInfo& local) {
  auto ranges = CheckWireRanges(local);
  if (!ranges) {
    Error e = std::move(ranges).error();
    e.code = ErrorCode::kInvalidArgument;
    e.operation = "encode local description: " + e.operation;
    return e;
  }
  return EncodeBinary(local);
}

Result<EndpointInfo> DecodePeer(std::string_view body, const std::string& channel) {
  auto info = DecodeBinary(body);
  if (!info) {
    Error e = std::move(info).error();
    e.operation = "decode peer description from " + channel +
                  (e.operation.empty() ? std::string() : ": " + e.operation);
    return e;
  }
  return info;
}

Result<void> CheckStage(std::string_view stage) {
  if (stage.empty() || stage.size() > 64) {
    return MakeError(ErrorCode::kInvalidArgument, "barrier",
                     "stage name must be 1 to 64 bytes, got " + std::to_string(stage.size()));
  }
  for (char c : stage) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) {
      return MakeError(ErrorCode::kInvalidArgument, "barrier",
                       "stage name must be printable ASCII");
    }
  }
  return Ok();
}

Result<void> MatchStage(std::string_view body, std::string_view stage, const std::string& channel) {
  if (body != stage) {
    return MakeError(ErrorCode::kProtocol, "barrier with " + channel,
                     "the peer reached stage '" + Printable(body, 64) + "', this side '" +
                         std::string(stage) + "'",
                     "stage");
  }
  return Ok();
}

}  // namespace qpconnect::oob::internal
