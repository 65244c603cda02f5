// SPDX-License-Identifier: MIT
// libFuzzer target for the framing below the codec (docs/oob.md, "Fuzzing"):
// DecodeFrameHeader, DecodeFrame, PeekFrameSize, the stdio line decoder, the
// session's checks (binding, key confirmation, AEAD) on whatever frame
// decodes, with and without a key, and the message stream's decoder
// (StreamSession::Take) on the input as a peer's first bytes, and after an
// honest peer's hello (and with a key its confirm) as its messages.
//
// Beyond "no crash, no sanitizer report": a frame that decodes re-encodes to
// the same bytes, PeekFrameSize agrees with DecodeFrame, and a line that
// decodes re-encodes to a line that decodes to the same bytes. A violation
// aborts, which libFuzzer reports with the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "handshake.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/stdio.h"
#include "qpconnect/oob/stream_session.h"

namespace {

using namespace qpconnect::oob;  // NOLINT(google-build-using-namespace)

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "frame_fuzzer: %s\n", what);
  std::abort();
}

constexpr uint32_t kCap = 4096;

void CheckFrame(std::string_view input) {
  auto frame = DecodeFrame(input, kCap);
  auto size = PeekFrameSize(input, kCap);
  if (input.size() >= kFrameHeaderBytes) {
    auto header = DecodeFrameHeader(input.substr(0, kFrameHeaderBytes), kCap);
    if (header.has_value() != size.has_value()) Fail("PeekFrameSize and the header disagree");
    if (header && *size != kFrameHeaderBytes + header->BodyBytes()) Fail("size mismatch");
  }
  if (!frame) return;
  if (!size || *size != input.size()) Fail("PeekFrameSize disagrees with DecodeFrame");
  if (EncodeFrame(*frame) != input) Fail("frame round trip changed the bytes");
  if (frame->payload.size() > kCap) Fail("payload above the cap");

  // The session's checks on it, as a side with and without a key would run
  // them at each step (a hello, a confirm, a description, a barrier).
  for (bool keyed : {false, true}) {
    std::optional<Psk> psk;
    if (keyed) psk = *Psk::FromBytes("a fuzzing key of 32 bytes.......");
    internal::Handshake s(std::move(psk), OobRole::kClient);
    if (!s.Begin()) Fail("Begin");
    s.set_channel("fuzz");
    (void)s.AcceptHello(*frame);
    for (FrameType expected : {FrameType::kConfirm, FrameType::kEndpoint, FrameType::kBarrier}) {
      (void)s.Open(*frame, expected, 0, /*learn_peer_nonce=*/true);
      (void)s.Open(*frame, expected, 1);
    }
  }
}

std::unique_ptr<StreamSession> Stream(OobRole role, bool keyed) {
  StreamOptions o;
  o.protocol = "qpcm";
  o.version = 4;
  o.role = role;
  if (keyed) o.psk = *Psk::FromBytes("a fuzzing key of 32 bytes.......");
  o.max_message_bytes = kCap;
  auto s = StreamSession::Create(std::move(o));
  if (!s) Fail("StreamSession::Create");
  return std::move(*s);
}

// Everything `s` takes from `input`; what it takes stays within the input.
void TakeAll(StreamSession& s, std::string_view input) {
  size_t at = 0;
  for (;;) {
    auto in = s.Take(input.substr(at));
    if (!in || in->kind == StreamInput::Kind::kIncomplete) return;
    if (in->consumed == 0 || in->consumed > input.size() - at)
      Fail("Take consumed nothing or too much");
    if (in->body.size() > kCap) Fail("a stream message above the cap");
    at += in->consumed;
  }
}

void CheckStream(std::string_view input) {
  for (bool keyed : {false, true}) {
    // The input as the peer's first bytes.
    TakeAll(*Stream(OobRole::kServer, keyed), input);
    // After an honest peer's hello (and confirm): the input as its messages.
    auto peer = Stream(OobRole::kClient, keyed);
    auto us = Stream(OobRole::kServer, keyed);
    auto hello = us->Take(peer->Hello());
    auto theirs = peer->Take(us->Hello());
    if (!hello || !theirs) Fail("honest hellos refused");
    if (keyed) {
      auto confirm = us->Take(theirs->reply);
      if (!confirm || !us->Established()) Fail("honest confirm refused");
    }
    TakeAll(*us, input);
  }
}

void CheckLine(std::string_view input) {
  auto bytes = DecodeStdioLine(input);
  if (!bytes) return;
  const std::string line = EncodeStdioLine(*bytes);
  auto again = DecodeStdioLine(line);
  if (!again || *again != *bytes) Fail("stdio line round trip changed the bytes");
  CheckFrame(*bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckFrame(input);
  CheckLine(input);
  CheckStream(input);
  return 0;
}
