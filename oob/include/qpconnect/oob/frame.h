// SPDX-License-Identifier: MIT
// The frame: how the exchangers delimit and tag one message on their channel.
//
// Every message an exchanger sends (over TCP, in a file, or base64url-encoded
// on a line of text) is one frame:
//
//   offset  size  field
//   0       4     magic 0x89 'Q' 'P' 'C' (the high byte catches 7-bit mangling)
//   4       1     frame version, kFrameVersion
//   5       1     type (FrameType)
//   6       1     flags (kFrameFlag*)
//   7       1     reserved, must be 0
//   8       4     payload length, big-endian, <= the receiver's cap
//   12      N     payload
//   12+N    T     trailer: a 32-byte HMAC-SHA256 (kFrameFlagMac, the key
//                 confirmation) or a 16-byte AES-256-GCM tag (kFrameFlagSealed:
//                 the payload after its binding is ciphertext); none otherwise
//
// A receiver decodes the 12-byte header first and refuses a length above its
// cap before it allocates anything for the payload. docs/oob.md describes the
// payload of each type and the PSK scheme (key confirmation, then AEAD).
//
// Version 2 (this build) added the key confirmation (kConfirm), the sealed
// (encrypted) messages and the role flags; a version-1 peer is refused with
// kIncompatible naming both versions, never misread. The stream message
// (kStream) and the hello's protocol tail of a message stream
// (stream_session.h) came later within version 2: the exchangers never send
// them, and a build without them refuses them (unknown type, malformed
// hello), so exchangers of every version-2 build still talk to each other.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "qpconnect/result.h"

namespace qpconnect::oob {

inline constexpr std::array<uint8_t, 4> kFrameMagic = {0x89, 'Q', 'P', 'C'};
inline constexpr uint8_t kFrameVersion = 2;
inline constexpr size_t kFrameHeaderBytes = 12;
inline constexpr size_t kFrameMacBytes = 32;
inline constexpr size_t kFrameTagBytes = 16;  // AES-256-GCM tag

// Default cap on a frame's payload. An endpoint description costs at most
// about 12 bytes per QP without an MR descriptor (docs/oob.md has the sums), so
// 16 MiB carries 1M QPs; raise the cap (max_payload_bytes) for 1M QPs with MRs.
inline constexpr uint32_t kDefaultMaxPayloadBytes = 16u << 20;
// The largest cap an exchanger accepts in its options.
inline constexpr uint32_t kMaxPayloadBytesLimit = 1u << 30;

enum class FrameType : uint8_t {
  kHello = 1,     // payload: the sender's 16-byte nonce
  kEndpoint = 2,  // payload: [binding] + codec's EncodeBinary bytes
  kBarrier = 3,   // payload: [binding] + stage name
  kAbort = 4,     // payload: [binding] + reason text
  kConfirm = 5,   // PSK only: payload: binding; trailer: HMAC key confirmation
  // A message stream's message (stream_session.h): payload: the body, or
  // with a PSK binding + sealed body.
  kStream = 6,
};

// "hello", "endpoint", "barrier", "abort", "confirm", "stream"; "unknown"
// otherwise.
const char* FrameTypeName(FrameType type);

// Flags. Unknown bits are refused, and so are Mac with Sealed, and both roles.
inline constexpr uint8_t kFrameFlagMac = 0x01;    // a 32-byte HMAC trailer follows the payload
inline constexpr uint8_t kFrameFlagBound = 0x02;  // payload starts with a 36-byte binding
inline constexpr uint8_t kFrameFlagPsk = 0x04;    // hello only: the sender has a PSK
// The payload after the binding is AES-256-GCM ciphertext; a 16-byte tag follows.
inline constexpr uint8_t kFrameFlagSealed = 0x08;
// The sender's declared role (OobRole), so that two clients or two servers
// are refused before anything is connected. Neither bit: no role declared.
inline constexpr uint8_t kFrameFlagRoleClient = 0x10;
inline constexpr uint8_t kFrameFlagRoleServer = 0x20;
inline constexpr uint8_t kFrameFlagsKnown = kFrameFlagMac | kFrameFlagBound | kFrameFlagPsk |
                                            kFrameFlagSealed | kFrameFlagRoleClient |
                                            kFrameFlagRoleServer;

// The role a side declares in its frames. Two sides that declare the same
// role (both clients, both servers) refuse each other (kIncompatible) at the
// first frame they see, before any description is used.
enum class OobRole : uint8_t { kNone, kClient, kServer };

// "client", "server", "none".
const char* OobRoleName(OobRole role);
// The flag bits for `role`, and the role the flags of a frame declare.
uint8_t RoleFlags(OobRole role);
OobRole RoleOfFlags(uint8_t flags);

struct FrameHeader {
  FrameType type = FrameType::kEndpoint;
  uint8_t flags = 0;
  uint32_t payload_bytes = 0;

  size_t TrailerBytes() const {
    return (flags & kFrameFlagMac) != 0      ? kFrameMacBytes
           : (flags & kFrameFlagSealed) != 0 ? kFrameTagBytes
                                             : 0;
  }
  // Bytes that follow the header: payload and trailer.
  size_t BodyBytes() const { return payload_bytes + TrailerBytes(); }
};

struct Frame {
  FrameType type = FrameType::kEndpoint;
  uint8_t flags = 0;
  std::string payload;
  // The trailer: kFrameMacBytes bytes iff flags has kFrameFlagMac,
  // kFrameTagBytes iff kFrameFlagSealed, else empty.
  std::string mac;
};

// The 12-byte header. REQUIRES: payload_bytes fits the receiver's cap.
std::string EncodeFrameHeader(FrameType type, uint8_t flags, uint32_t payload_bytes);

// Header, payload and trailer. REQUIRES: frame.payload.size() <= UINT32_MAX and
// frame.mac.size() is the trailer size the flags announce.
std::string EncodeFrame(const Frame& frame);

// Decodes a header. `header` must hold exactly kFrameHeaderBytes bytes. Errors:
//   kProtocol      wrong magic (not a qpconnect frame), unknown type or flags,
//                  contradicting flags, non-zero reserved byte, length above
//                  `max_payload_bytes` (attribute "magic", "type", "flags",
//                  "reserved", "length")
//   kIncompatible  frame version other than kFrameVersion, naming both
//                  (attribute "version")
Result<FrameHeader> DecodeFrameHeader(std::string_view header, uint32_t max_payload_bytes);

// Decodes one whole frame that must span all of `bytes`. Errors as
// DecodeFrameHeader, plus kProtocol for a truncated frame (fewer bytes than the
// header announces, attribute "length") or trailing bytes after it.
Result<Frame> DecodeFrame(std::string_view bytes, uint32_t max_payload_bytes);

// The size of the frame that starts `bytes` when its header is there and
// valid (header + payload + trailer), for a reader that must tell "not all
// there yet" from "not a frame": 0 when fewer than kFrameHeaderBytes bytes
// are present. Errors as DecodeFrameHeader.
Result<size_t> PeekFrameSize(std::string_view bytes, uint32_t max_payload_bytes);

}  // namespace qpconnect::oob
