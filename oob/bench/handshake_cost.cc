// SPDX-License-Identifier: MIT
// What the out-of-band handshake costs on the wire: frames, bytes and
// one-way delays of Exchange() and Barrier(), with and without a key, for 1
// and 1,000 QPs (docs/benchmarks.md, docs/oob.md).
//
// Two channel exchangers (channel.h, the protocol tcp speaks too) talk over
// an in-memory channel that delivers each send() `kDelay` later, so the time
// a call takes, divided by kDelay, is the number of one-way delays it waits
// for in sequence (two make a round trip). Uses only the public API, so the
// same file measures an older build.
//
//   cmake --build build --target oob_handshake_cost && build/oob/oob_handshake_cost
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "qpconnect/oob/channel.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/oob/psk.h"

namespace {

using namespace qpconnect;       // NOLINT(google-build-using-namespace)
using namespace qpconnect::oob;  // NOLINT(google-build-using-namespace)
using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kDelay{25};

// One direction: bytes become readable kDelay after they were sent.
class Wire {
 public:
  void Send(std::string_view bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    q_.push_back({Clock::now() + kDelay, std::string(bytes)});
    ++frames_;
    bytes_ += bytes.size();
    cv_.notify_all();
  }
  Result<size_t> Receive(char* buf, size_t max, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!q_.empty() && Clock::now() >= q_.front().at) break;
      const auto until = q_.empty() ? deadline : std::min(deadline, q_.front().at);
      if (Clock::now() >= deadline) {
        Error e;
        e.code = ErrorCode::kTimeout;
        return e;
      }
      cv_.wait_until(lock, until);
    }
    auto& front = q_.front();
    const size_t n = std::min(max, front.bytes.size());
    std::memcpy(buf, front.bytes.data(), n);
    front.bytes.erase(0, n);
    if (front.bytes.empty()) q_.pop_front();
    return n;
  }
  size_t frames() const { return frames_; }
  size_t bytes() const { return bytes_; }

 private:
  struct Chunk {
    Clock::time_point at;
    std::string bytes;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> q_;
  size_t frames_ = 0;
  size_t bytes_ = 0;
};

ByteChannel Channel(Wire& out, Wire& in) {
  ByteChannel c;
  c.send = [&out](std::string_view bytes, Clock::time_point) -> Result<void> {
    out.Send(bytes);
    return Ok();
  };
  c.receive = [&in](char* buf, size_t max, Clock::time_point deadline) {
    return in.Receive(buf, max, deadline);
  };
  return c;
}

EndpointInfo Endpoint(const char* host, uint32_t n) {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.identity = {host, "rxe0", 0x0002c90300010203ULL};
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.active = true;
  e.port.active_mtu = Mtu::k1024;
  e.port.max_mtu = Mtu::k4096;
  e.path.path_mtu = Mtu::k1024;
  for (uint32_t i = 0; i < n; ++i) {  // consecutive QPNs, random-looking PSNs, an MR each
    e.qps.push_back({0x11 + i, (i * 2654435761u) & kPsnMask,
                     MrDescriptor{0x7f3a52000000ULL + i * 8192ULL, 0x1f2e00 + i, 8192}});
  }
  return e;
}

struct Cost {
  size_t frames[2], bytes[2];  // per direction, of the exchange alone
  double exchange_ms;          // until both sides have the peer's description
  double barrier_ms;           // a barrier both sides enter at once
};

// Runs `f(side)` on two threads at once; returns when both are done.
template <typename F>
void OnBoth(F f) {
  auto other = std::async(std::launch::async, [&] { f(1); });
  f(0);
  other.get();
}

Cost Measure(uint32_t qps, bool keyed) {
  Wire wires[2];  // wires[0]: side 0 to side 1
  std::unique_ptr<Exchanger> x[2];
  for (int side = 0; side < 2; ++side) {
    ChannelOptions o;
    if (keyed) o.psk = *Psk::FromBytes("0123456789abcdef0123456789abcdef");
    auto made = CreateChannelExchanger(Channel(wires[side], wires[1 - side]), std::move(o));
    x[side] = std::move(*made);
  }
  bool ok[2] = {false, false};
  auto start = Clock::now();
  OnBoth([&](int side) {
    ok[side] = x[side]
                   ->Exchange(Endpoint(side == 0 ? "a" : "b", qps), std::chrono::seconds(10))
                   .has_value();
  });
  const auto exchanged = Clock::now();
  Cost c{{wires[0].frames(), wires[1].frames()},
         {wires[0].bytes(), wires[1].bytes()},
         std::chrono::duration<double, std::milli>(exchanged - start).count(),
         0};
  start = Clock::now();
  OnBoth([&](int side) {
    ok[side] = ok[side] && x[side]->Barrier("rtr", std::chrono::seconds(10)).has_value();
  });
  c.barrier_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!ok[0] || !ok[1]) std::fprintf(stderr, "exchange failed\n");
  return c;
}

}  // namespace

int main() {
  std::printf("one-way delay %lld ms; frames and bytes of the exchange, each direction\n",
              static_cast<long long>(kDelay.count()));
  std::printf("%-6s %-5s %-12s %-16s %-26s %-20s\n", "QPs", "key", "frames", "bytes",
              "exchange (one-way delays)", "barrier");
  for (uint32_t qps : {1u, 1000u}) {
    for (bool keyed : {false, true}) {
      Cost c = Measure(qps, keyed);
      const double d = static_cast<double>(kDelay.count());
      std::printf("%-6u %-5s %zu/%-10zu %zu/%-10zu %6.0f ms (%.1f)%12s %4.0f ms (%.1f)\n", qps,
                  keyed ? "yes" : "no", c.frames[0], c.frames[1], c.bytes[0], c.bytes[1],
                  c.exchange_ms, c.exchange_ms / d, "", c.barrier_ms, c.barrier_ms / d);
    }
  }
  std::printf("codec bytes of one description: 1 QP %zu, 1000 QPs %zu\n",
              EncodeBinary(Endpoint("a", 1)).size(), EncodeBinary(Endpoint("a", 1000)).size());
  return 0;
}
