// SPDX-License-Identifier: MIT
// StdioExchanger: endpoint descriptions as lines of text over a pair of file
// descriptors (standard input/output, an ssh pipe, a terminal a person pastes
// into, a file a scheduler delivers).
//
// Each message is one line: "qpc1:" followed by the base64url (RFC 4648 §5,
// no padding) encoding of one frame (frame.h), then "\n". The alphabet is
// [A-Za-z0-9_-], so the line survives shells, ssh, terminals and copy/paste.
//
// Reading is tolerant: surrounding spaces, tabs and a CR ("\r\n") are
// ignored, as are empty lines and lines that do not start with "qpc" (an ssh
// banner, a motd, a shell's noise) up to max_skipped_bytes in all. A line
// "qpcN:" with another N is refused (kIncompatible); a "qpc1:" line that is
// not valid base64url or not a valid frame is refused (kProtocol). End of
// input before the line is kIo, naming the lines skipped. A last line without
// its "\n" is accepted at end of input.
//
// Without a PSK, Exchange() costs one line each way. With a PSK it costs
// three: each side first sends a hello line with its fresh nonce, then a
// confirm line proving it holds the key, and only once the peer's confirm
// verified its description line, bound to both nonces and encrypted (psk.h).
// A person relaying lines by hand therefore pastes six lines instead of two.
// Barrier() costs one line each way. A line declares the side's role
// (StdioOptions::role): two clients refuse each other.
//
// Sends and receives are interleaved with poll() (the output fd is made
// non-blocking for the duration of a call and restored after), so two sides
// that both write long lines into pipes do not deadlock, and every wait is
// bounded by the deadline. SIGPIPE is blocked while writing: a closed output
// is kIo (EPIPE). Input read past the line is kept for the next call.
//
// Thread-safety: one thread at a time; the descriptors must not be read or
// written by anything else while a call runs.
#pragma once

#include <chrono>
#include <cstddef>
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

inline constexpr std::string_view kStdioLinePrefix = "qpc1:";

struct StdioOptions {
  std::optional<Psk> psk;  // both sides need the same key, or neither
  // Declared on every line; two sides that declare the same role (both
  // clients) refuse each other with kIncompatible. kNone: no role.
  OobRole role = OobRole::kNone;
  uint32_t max_payload_bytes = kDefaultMaxPayloadBytes;
  // The most QPs the peer's description may hold; 0: as many as ours.
  uint32_t max_peer_qps = 0;
  // Bytes of other lines (not starting with "qpc") tolerated before a line.
  size_t max_skipped_bytes = 1u << 20;
};

// The line for `frame_bytes` (with its "\n").
std::string EncodeStdioLine(std::string_view frame_bytes);
// The frame bytes of a line (prefix and surrounding whitespace allowed; no
// "\n" inside). kProtocol for a missing prefix or bad base64url; kIncompatible
// for "qpcN:" with N != 1.
Result<std::string> DecodeStdioLine(std::string_view line);

// The calls of the Exchanger interface (protocol_exchanger.h), as lines:
//   Abort()     writes an abort line (bound and authenticated as the session
//               allows).
//   PollPeer()  kIo once the input ended (the peer exited or was killed),
//               kProtocol once the peer's abort line arrived.
//   Cancel()    ends a pending read or write; the abort line goes out when a
//               session is under way (with a PSK: once the hellos are known,
//               or an early abort).
class StdioExchanger : public ProtocolExchanger {
 public:
  // Reads lines from `in_fd` and writes to `out_fd` (may be equal, e.g. a
  // socket). Does not take ownership. kInvalidArgument for a negative fd or a
  // bad cap.
  static Result<std::unique_ptr<StdioExchanger>> Create(int in_fd, int out_fd,
                                                        StdioOptions options = {});

 private:
  class Impl;
  explicit StdioExchanger(std::unique_ptr<Impl> impl);
};

}  // namespace qpconnect::oob
