// SPDX-License-Identifier: MIT
#include "qpconnect/oob/frame.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace qpconnect::oob {
namespace {

Error FrameError(ErrorCode code, std::string attribute, std::string detail) {
  Error e;
  e.code = code;
  e.operation = "decode frame";
  e.attribute = std::move(attribute);
  e.detail = std::move(detail);
  return e;
}

std::string HexBytes(std::string_view bytes) {
  std::string out;
  char buf[4];
  for (char c : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    out += buf;
  }
  return out;
}

// A guess at what the bytes are when they are not a frame, for the message.
std::string WhatItLooksLike(std::string_view h) {
  auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  if (h.size() >= 5 && is_hex(h[0]) && is_hex(h[1]) && is_hex(h[2]) && is_hex(h[3]) &&
      h[4] == ':') {
    return " (looks like an ibv_*_pingpong text record: the peer speaks the pingpong dialect)";
  }
  if (h.substr(0, 4) == "SSH-") return " (looks like an SSH banner)";
  if (h.substr(0, 4) == "GET " || h.substr(0, 4) == "POST" || h.substr(0, 4) == "HTTP") {
    return " (looks like HTTP)";
  }
  if (h.substr(0, 4) == "qpc1") return " (looks like a qpc1: text line: use the stdio exchanger)";
  if (h.substr(0, 3) == "QPC") return " (magic without its 0x89 byte: channel not 8-bit clean?)";
  // libqpcm's links before they spoke frames: a 4-byte length, then its
  // HELLO (type 1, "QPCM", its wire version 1 to 3).
  if (h.size() >= 9 && h[4] == 1 && h.substr(5, 4) == "QPCM") {
    return " (looks like the HELLO of an older libqpcm, wire version 3 or below, before its links "
           "spoke these frames: upgrade the peer)";
  }
  return {};
}

}  // namespace

const char* FrameTypeName(FrameType type) {
  switch (type) {
    case FrameType::kHello:
      return "hello";
    case FrameType::kEndpoint:
      return "endpoint";
    case FrameType::kBarrier:
      return "barrier";
    case FrameType::kAbort:
      return "abort";
    case FrameType::kConfirm:
      return "confirm";
    case FrameType::kStream:
      return "stream";
  }
  return "unknown";
}

const char* OobRoleName(OobRole role) {
  switch (role) {
    case OobRole::kClient:
      return "client";
    case OobRole::kServer:
      return "server";
    case OobRole::kNone:
      break;
  }
  return "none";
}

uint8_t RoleFlags(OobRole role) {
  return role == OobRole::kClient   ? kFrameFlagRoleClient
         : role == OobRole::kServer ? kFrameFlagRoleServer
                                    : 0;
}

OobRole RoleOfFlags(uint8_t flags) {
  if ((flags & kFrameFlagRoleClient) != 0) return OobRole::kClient;
  if ((flags & kFrameFlagRoleServer) != 0) return OobRole::kServer;
  return OobRole::kNone;
}

std::string EncodeFrameHeader(FrameType type, uint8_t flags, uint32_t payload_bytes) {
  std::string h(kFrameHeaderBytes, '\0');
  for (size_t i = 0; i < kFrameMagic.size(); ++i) h[i] = static_cast<char>(kFrameMagic[i]);
  h[4] = static_cast<char>(kFrameVersion);
  h[5] = static_cast<char>(type);
  h[6] = static_cast<char>(flags);
  h[7] = 0;
  h[8] = static_cast<char>((payload_bytes >> 24) & 0xff);
  h[9] = static_cast<char>((payload_bytes >> 16) & 0xff);
  h[10] = static_cast<char>((payload_bytes >> 8) & 0xff);
  h[11] = static_cast<char>(payload_bytes & 0xff);
  return h;
}

std::string EncodeFrame(const Frame& frame) {
  std::string out =
      EncodeFrameHeader(frame.type, frame.flags, static_cast<uint32_t>(frame.payload.size()));
  out.reserve(out.size() + frame.payload.size() + frame.mac.size());
  out += frame.payload;
  out += frame.mac;
  return out;
}

Result<FrameHeader> DecodeFrameHeader(std::string_view header, uint32_t max_payload_bytes) {
  if (header.size() != kFrameHeaderBytes) {
    return FrameError(ErrorCode::kProtocol, "length",
                      "truncated frame: header has " + std::to_string(header.size()) + " of " +
                          std::to_string(kFrameHeaderBytes) + " bytes");
  }
  auto byte = [&](size_t i) { return static_cast<uint8_t>(header[i]); };
  for (size_t i = 0; i < kFrameMagic.size(); ++i) {
    if (byte(i) != kFrameMagic[i]) {
      return FrameError(ErrorCode::kProtocol, "magic",
                        "not a qpconnect frame: starts with 0x" + HexBytes(header.substr(0, 4)) +
                            ", expected 0x89515043 (\\x89QPC)" + WhatItLooksLike(header));
    }
  }
  if (byte(4) != kFrameVersion) {
    const std::string peer = std::to_string(byte(4));
    const std::string ours = std::to_string(kFrameVersion);
    return FrameError(
        ErrorCode::kIncompatible, "version",
        "unsupported frame version " + peer + "; this build speaks version " + ours +
            (byte(4) < kFrameVersion ? " (the peer runs an older qpconnect: upgrade it)"
                                     : " (the peer runs a newer qpconnect: upgrade this side)"));
  }
  FrameHeader h;
  const uint8_t type = byte(5);
  if (type < static_cast<uint8_t>(FrameType::kHello) ||
      type > static_cast<uint8_t>(FrameType::kStream)) {
    return FrameError(ErrorCode::kProtocol, "type", "unknown frame type " + std::to_string(type));
  }
  h.type = static_cast<FrameType>(type);
  h.flags = byte(6);
  if ((h.flags & ~kFrameFlagsKnown) != 0) {
    return FrameError(ErrorCode::kProtocol, "flags",
                      "unknown frame flags 0x" + HexBytes(header.substr(6, 1)));
  }
  if ((h.flags & kFrameFlagMac) != 0 && (h.flags & kFrameFlagSealed) != 0) {
    return FrameError(ErrorCode::kProtocol, "flags",
                      "frame flags 0x" + HexBytes(header.substr(6, 1)) +
                          " announce both an HMAC and an AEAD tag");
  }
  if ((h.flags & kFrameFlagRoleClient) != 0 && (h.flags & kFrameFlagRoleServer) != 0) {
    return FrameError(ErrorCode::kProtocol, "flags",
                      "frame flags 0x" + HexBytes(header.substr(6, 1)) +
                          " declare both roles, client and server");
  }
  if (byte(7) != 0) {
    return FrameError(ErrorCode::kProtocol, "reserved",
                      "reserved header byte is 0x" + HexBytes(header.substr(7, 1)) + ", not 0");
  }
  h.payload_bytes = (uint32_t{byte(8)} << 24) | (uint32_t{byte(9)} << 16) |
                    (uint32_t{byte(10)} << 8) | uint32_t{byte(11)};
  if (h.payload_bytes > max_payload_bytes) {
    return FrameError(ErrorCode::kProtocol, "length",
                      "oversized frame: payload length " + std::to_string(h.payload_bytes) +
                          " exceeds the cap of " + std::to_string(max_payload_bytes) + " bytes");
  }
  return h;
}

Result<size_t> PeekFrameSize(std::string_view bytes, uint32_t max_payload_bytes) {
  if (bytes.size() < kFrameHeaderBytes) {
    // Refuse what cannot become a frame as soon as it shows.
    for (size_t i = 0; i < bytes.size() && i < kFrameMagic.size(); ++i) {
      if (static_cast<uint8_t>(bytes[i]) != kFrameMagic[i]) {
        return FrameError(ErrorCode::kProtocol, "magic",
                          "not a qpconnect frame: starts with 0x" +
                              HexBytes(bytes.substr(0, std::min<size_t>(bytes.size(), 4))) +
                              ", expected 0x89515043 (\\x89QPC)" + WhatItLooksLike(bytes));
      }
    }
    return size_t{0};
  }
  auto header = DecodeFrameHeader(bytes.substr(0, kFrameHeaderBytes), max_payload_bytes);
  if (!header) return std::move(header).error();
  return kFrameHeaderBytes + header->BodyBytes();
}

Result<Frame> DecodeFrame(std::string_view bytes, uint32_t max_payload_bytes) {
  auto header = DecodeFrameHeader(bytes.substr(0, kFrameHeaderBytes), max_payload_bytes);
  if (!header) return std::move(header).error();
  const size_t want = kFrameHeaderBytes + header->BodyBytes();
  if (bytes.size() < want) {
    return FrameError(ErrorCode::kProtocol, "length",
                      "truncated frame: " + std::to_string(bytes.size()) + " of " +
                          std::to_string(want) + " bytes");
  }
  if (bytes.size() > want) {
    return FrameError(ErrorCode::kProtocol, "length",
                      std::to_string(bytes.size() - want) + " unexpected bytes after the frame");
  }
  Frame f;
  f.type = header->type;
  f.flags = header->flags;
  f.payload.assign(bytes.substr(kFrameHeaderBytes, header->payload_bytes));
  f.mac.assign(bytes.substr(kFrameHeaderBytes + header->payload_bytes));
  return f;
}

}  // namespace qpconnect::oob
