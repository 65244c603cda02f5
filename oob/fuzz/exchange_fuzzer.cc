// SPDX-License-Identifier: MIT
// libFuzzer target for a whole exchange against fuzzed peer bytes (docs/oob.md,
// "Fuzzing"): Exchange(), Barrier() and PollPeer() of the protocol driver,
// through each kind of port, with and without a key. The first input byte
// picks the mode, the rest is the peer:
//
//   0  a byte stream (the tcp/channel port), no key: the bytes are the peer's
//   1  the same with a key
//   2  an honest keyed peer (the library's own Handshake on the other end)
//      whose description body, barrier stage and one byte flip are taken from
//      the input: the confirm and sealed messages verify, so the fuzzer
//      reaches decryption, the codec and the stage check
//   3  stdio lines (the input, read from a pipe), no key or (odd byte 1) a key
//
// Nothing waits: the channel's receive() returns 0 (end of stream) when the
// input is used up, and every deadline is short. Whatever the input, the calls
// must return (no crash, no sanitizer report, no leak).
#include <fcntl.h>
#include <google/protobuf/stubs/logging.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "handshake.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/oob/channel.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"
#include "qpconnect/oob/stdio.h"

namespace {

using namespace qpconnect;       // NOLINT(google-build-using-namespace)
using namespace qpconnect::oob;  // NOLINT(google-build-using-namespace)
using namespace std::chrono_literals;

Psk FuzzKey() { return *Psk::FromBytes("a fuzzing key of 32 bytes......."); }

EndpointInfo Local() {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.identity = {"fuzz", "mlx5_0", 1};
  e.port.link_layer = LinkLayer::kInfiniBand;
  e.port.active = true;
  e.port.lid = 1;
  e.port.active_mtu = Mtu::k4096;
  e.port.max_mtu = Mtu::k4096;
  e.path.path_mtu = Mtu::k1024;
  e.qps.push_back({0x100, 7, std::nullopt});
  e.qps.push_back({0x101, 8, std::nullopt});
  return e;
}

// The whole call sequence a caller would make.
void Drive(Exchanger& x) {
  auto peer = x.Exchange(Local(), 50ms);
  if (!peer) return;
  (void)x.PollPeer();
  (void)x.Barrier("rtr", 50ms);
  (void)x.PollPeer();
  x.Abort("fuzz", 10ms);
}

// Modes 0 and 1: the input is the peer's byte stream.
void RawStream(std::string_view peer, bool keyed) {
  size_t at = 0;
  ByteChannel ch;
  ch.send = [](std::string_view, std::chrono::steady_clock::time_point) -> Result<void> {
    return Ok();
  };
  ch.receive = [&](char* buf, size_t max, std::chrono::steady_clock::time_point) -> Result<size_t> {
    const size_t n = std::min(max, peer.size() - at);
    std::memcpy(buf, peer.data() + at, n);
    at += n;
    return n;  // 0 at the end: the peer closed
  };
  ChannelOptions o;
  o.name = "fuzz";
  if (keyed) o.psk = FuzzKey();
  o.role = OobRole::kServer;
  auto x = CreateChannelExchanger(std::move(ch), std::move(o));
  if (x) Drive(**x);
}

// Mode 2: an honest keyed peer, fed our frames as we send them, whose
// messages carry fuzzed content and one flipped byte.
void HonestPeer(std::string_view input) {
  // input: [flip frame index][flip offset hi][flip offset lo][stage len] stage body
  uint8_t flip_frame = 0xff;
  size_t flip_at = 0;
  std::string stage = "rtr";
  std::string body;
  if (input.size() >= 4) {
    flip_frame = static_cast<uint8_t>(input[0]) % 8;
    flip_at =
        static_cast<size_t>((static_cast<uint8_t>(input[1]) << 8) | static_cast<uint8_t>(input[2]));
    const size_t stage_len =
        std::min<size_t>(static_cast<uint8_t>(input[3]) % 70, input.size() - 4);
    stage.assign(input.substr(4, stage_len));
    body.assign(input.substr(4 + stage_len));
  }
  if (body.empty()) body = EncodeBinary(Local());
  internal::Handshake peer(FuzzKey(), OobRole::kClient);
  if (!peer.Begin()) return;
  peer.set_channel("fuzz peer");
  std::string queue;  // what the peer has sent us, not yet read
  size_t read = 0;
  int frames = 0;
  auto push = [&](Result<std::string> frame) {
    if (!frame) return;
    std::string f = std::move(*frame);
    if (frames++ == flip_frame && !f.empty()) f[flip_at % f.size()] ^= 0x01;
    queue += f;
  };
  push(Result<std::string>(peer.EncodeHello()));
  std::string ours;  // bytes we sent, split into frames as they complete
  int ours_seen = 0;
  ByteChannel ch;
  ch.send = [&](std::string_view bytes, std::chrono::steady_clock::time_point) -> Result<void> {
    ours.append(bytes);
    auto frame = DecodeFrame(ours, kDefaultMaxPayloadBytes);
    ours.clear();
    if (!frame) return Ok();
    switch (ours_seen++) {
      case 0:  // our hello: the peer answers with its confirm and description
        if (!peer.AcceptHello(*frame)) return Ok();
        push(peer.SealConfirm());
        push(peer.Seal(FrameType::kEndpoint, body, 0));
        break;
      case 2:  // our description (after our confirm): the peer's barrier
        push(peer.Seal(FrameType::kBarrier, stage, 1));
        break;
      default:
        break;
    }
    return Ok();
  };
  ch.receive = [&](char* buf, size_t max, std::chrono::steady_clock::time_point) -> Result<size_t> {
    const size_t n = std::min(max, queue.size() - read);
    std::memcpy(buf, queue.data() + read, n);
    read += n;
    return n;
  };
  ChannelOptions o;
  o.name = "fuzz";
  o.psk = FuzzKey();
  o.role = OobRole::kServer;
  o.order = SendOrder::kBothFirst;  // the peer has answered before we read
  auto x = CreateChannelExchanger(std::move(ch), std::move(o));
  if (x) Drive(**x);
}

// Mode 3: the input as the peer's stdio lines.
void StdioLines(std::string_view input) {
  const bool keyed = !input.empty() && (static_cast<uint8_t>(input[0]) & 1) != 0;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return;
  // The input fits the pipe (-max_len is far below 64 KiB): write, then close.
  const std::string_view lines = input.substr(std::min<size_t>(1, input.size()));
  const ssize_t w = ::write(p[1], lines.data(), std::min<size_t>(lines.size(), 60000));
  (void)w;
  ::close(p[1]);
  static const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  StdioOptions o;
  if (keyed) o.psk = FuzzKey();
  o.role = OobRole::kServer;
  auto x = StdioExchanger::Create(p[0], devnull, std::move(o));
  if (x) Drive(**x);
  ::close(p[0]);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);  // as in codec_fuzzer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      RawStream(input, false);
      break;
    case 1:
      RawStream(input, true);
      break;
    case 2:
      HonestPeer(input);
      break;
    case 3:
      StdioLines(input);
      break;
  }
  return 0;
}
