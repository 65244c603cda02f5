// SPDX-License-Identifier: MIT
#include "qpconnect/oob/stream_session.h"

#include <utility>

#include "driver.h"  // kSmallFramePayloadBytes
#include "handshake.h"

namespace qpconnect::oob {
namespace {

using internal::Handshake;
using internal::MakeError;
using internal::Printable;

constexpr size_t kMaxProtocolName = 32;

// The hello's tail: version (2 bytes, big-endian), then the protocol's name.
std::string HelloTail(const StreamOptions& o) {
  std::string tail;
  tail += static_cast<char>(o.version >> 8);
  tail += static_cast<char>(o.version & 0xff);
  tail += o.protocol;
  return tail;
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > kMaxProtocolName) return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7e) return false;
  }
  return true;
}

}  // namespace

struct StreamSession::Impl {
  StreamOptions options;
  Handshake handshake;
  std::string hello;
  bool peer_hello = false;
  bool confirmed = false;  // with a PSK: the peer's confirm verified
  std::optional<Error> failed;
  std::string plain;  // the last message decrypted

  explicit Impl(StreamOptions o) : options(std::move(o)), handshake(options.psk, options.role) {}

  bool keyed() const { return options.psk.has_value(); }
  bool established() const { return peer_hello && (!keyed() || confirmed); }
  // The cap on the next frame's payload: small until the peer proved itself.
  uint32_t cap() const {
    if (!established()) return internal::kSmallFramePayloadBytes;
    return options.max_message_bytes +
           (keyed() ? static_cast<uint32_t>(internal::kBindingBytes) : 0);
  }

  Error Incompatible(std::string detail, std::string attribute) const {
    return MakeError(ErrorCode::kIncompatible,
                     "open " + options.protocol + " stream with " + options.channel,
                     std::move(detail), std::move(attribute));
  }
  Error Protocol(std::string detail, std::string attribute = {}) const {
    return MakeError(ErrorCode::kProtocol, "receive from " + options.channel, std::move(detail),
                     std::move(attribute));
  }

  // The tail of the peer's hello against ours: protocol, then version.
  Result<void> CheckTail(const Frame& f) const {
    const std::string_view payload = f.payload;
    const std::string ours =
        "'" + options.protocol + "' version " + std::to_string(options.version);
    if (payload.size() <= kNonceBytes + 2) {
      return Incompatible(
          payload.size() == kNonceBytes
              ? "the peer's hello opens an endpoint exchange (qp-connect's), not a " + ours +
                    " message stream"
              : "the peer's hello names no protocol (" + std::to_string(payload.size()) +
                    " payload bytes); this side speaks " + ours,
          "protocol");
    }
    const auto* v = reinterpret_cast<const unsigned char*>(payload.data() + kNonceBytes);
    const auto version = static_cast<uint16_t>((v[0] << 8) | v[1]);
    const std::string_view name = payload.substr(kNonceBytes + 2);
    if (name != options.protocol) {
      return Incompatible("the peer speaks '" + Printable(name, kMaxProtocolName) + "' version " +
                              std::to_string(version) + "; this side speaks " + ours,
                          "protocol");
    }
    if (version != options.version) {
      return Incompatible(
          "the peer speaks " + options.protocol + " version " + std::to_string(version) +
              "; this side speaks version " + std::to_string(options.version) +
              (version < options.version ? " (the peer runs an older qpconnect: upgrade it)"
                                         : " (the peer runs a newer qpconnect: upgrade this side)"),
          "version");
    }
    return Ok();
  }

  Result<StreamInput> TakeHello(std::string_view bytes) {
    auto f = DecodeFrame(bytes, cap());
    if (!f) return std::move(f).error();
    constexpr uint8_t kHelloFlags = kFrameFlagPsk | kFrameFlagRoleClient | kFrameFlagRoleServer;
    if (f->type == FrameType::kHello && (f->flags & ~kHelloFlags) == 0) QPC_TRY(CheckTail(*f));
    QPC_TRY(handshake.AcceptHello(*f, nullptr, /*with_tail=*/true));
    peer_hello = true;
    StreamInput in;
    in.kind = StreamInput::Kind::kHello;
    in.consumed = bytes.size();
    if (keyed()) {
      auto confirm = handshake.SealConfirm();
      if (!confirm) return std::move(confirm).error();
      in.reply = std::move(*confirm);
    }
    return in;
  }

  Result<StreamInput> TakeConfirm(std::string_view bytes) {
    auto f = DecodeFrame(bytes, cap());
    if (!f) return std::move(f).error();
    auto body = handshake.Open(*f, FrameType::kConfirm, 0);
    if (!body) return std::move(body).error();
    confirmed = true;
    StreamInput in;
    in.kind = StreamInput::Kind::kConfirm;
    in.consumed = bytes.size();
    return in;
  }

  Result<StreamInput> TakeMessage(std::string_view bytes) {
    auto header = DecodeFrameHeader(bytes.substr(0, kFrameHeaderBytes), cap());
    if (!header) return std::move(header).error();
    StreamInput in;
    in.kind = StreamInput::Kind::kMessage;
    in.consumed = bytes.size();
    if (keyed()) {
      auto opened = handshake.OpenNext(bytes, *header, FrameType::kStream);
      if (!opened) return std::move(opened).error();
      plain = std::move(*opened);
      in.body = plain;
      return in;
    }
    if (header->type != FrameType::kStream) {
      return Protocol(std::string("expected a stream message, got ") +
                          (header->type == FrameType::kHello
                               ? "a second hello"
                               : std::string("a ") + FrameTypeName(header->type) + " message"),
                      "type");
    }
    QPC_TRY(handshake.CheckRole(header->flags));
    if ((header->flags & ~(kFrameFlagRoleClient | kFrameFlagRoleServer)) != 0) {
      return Protocol("flags " + std::to_string(header->flags) +
                          " on a stream message without a pre-shared key (only a role may be "
                          "declared)",
                      "flags");
    }
    in.body = bytes.substr(kFrameHeaderBytes, header->payload_bytes);
    return in;
  }
};

StreamSession::StreamSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamSession::~StreamSession() = default;

Result<std::unique_ptr<StreamSession>> StreamSession::Create(StreamOptions options) {
  if (!ValidName(options.protocol)) {
    return MakeError(ErrorCode::kInvalidArgument, "stream options",
                     "protocol must be 1 to 32 printable ASCII bytes without spaces, got '" +
                         Printable(options.protocol, 40) + "'",
                     "protocol");
  }
  QPC_TRY(internal::CheckPayloadCap(options.max_message_bytes, "stream options"));
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->handshake.set_channel(impl->options.channel);
  QPC_TRY(impl->handshake.Begin());
  impl->hello = impl->handshake.EncodeHello(HelloTail(impl->options));
  return std::unique_ptr<StreamSession>(new StreamSession(std::move(impl)));
}

const std::string& StreamSession::Hello() const { return impl_->hello; }

bool StreamSession::CanSend() const { return !impl_->keyed() || impl_->confirmed; }

bool StreamSession::PeerHelloSeen() const { return impl_->peer_hello; }

bool StreamSession::Established() const { return impl_->established(); }

Result<void> StreamSession::AppendMessage(std::string_view body, std::string& out) {
  if (!CanSend()) {
    return MakeError(ErrorCode::kInvalidArgument, "send to " + impl_->options.channel,
                     "no message before the peer's confirm verified (a pre-shared key is set)");
  }
  if (body.size() > impl_->options.max_message_bytes) {
    return MakeError(ErrorCode::kInvalidArgument, "send to " + impl_->options.channel,
                     "a message of " + std::to_string(body.size()) + " bytes exceeds the cap of " +
                         std::to_string(impl_->options.max_message_bytes),
                     "length");
  }
  if (impl_->keyed()) return impl_->handshake.SealNext(FrameType::kStream, body, out);
  out += EncodeFrameHeader(FrameType::kStream, RoleFlags(impl_->options.role),
                           static_cast<uint32_t>(body.size()));
  out += body;
  return Ok();
}

Result<size_t> StreamSession::WholeFrameBytes(std::string_view bytes) const {
  if (impl_->failed) return *impl_->failed;
  auto size = PeekFrameSize(bytes, impl_->cap());
  if (!size) return std::move(size).error();
  return *size != 0 && bytes.size() >= *size ? *size : 0;
}

Result<StreamInput> StreamSession::Take(std::string_view bytes) {
  auto size = WholeFrameBytes(bytes);
  if (!size) {
    if (!impl_->failed) impl_->failed = size.error();
    return std::move(size).error();
  }
  if (*size == 0) return StreamInput{};
  const std::string_view frame = bytes.substr(0, *size);
  Result<StreamInput> in = !impl_->peer_hello                    ? impl_->TakeHello(frame)
                           : impl_->keyed() && !impl_->confirmed ? impl_->TakeConfirm(frame)
                                                                 : impl_->TakeMessage(frame);
  if (!in) impl_->failed = in.error();
  return in;
}

}  // namespace qpconnect::oob
