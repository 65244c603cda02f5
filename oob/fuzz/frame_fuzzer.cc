// libFuzzer target for the framing below the codec (docs/oob.md, "Fuzzing"):
// DecodeFrameHeader, DecodeFrame, PeekFrameSize, the stdio line decoder, and
// the session's checks (binding, key confirmation, AEAD) on whatever frame
// decodes, with and without a key.
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
  return 0;
}
