// SPDX-License-Identifier: MIT
// Sample endpoints and keys, the checks every exchanger must pass, and raw
// descriptor helpers for playing a peer by hand, shared by the tcp, file,
// stdio and channel exchanger tests.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/exchanger.h"
#include "qpconnect/oob/frame.h"
#include "qpconnect/oob/psk.h"

namespace qpconnect::oob {

// An InfiniBand RC endpoint on `host` with `n_qps` QPs (QPN 0x100 + i).
inline EndpointInfo MakeEndpoint(const std::string& host, uint32_t n_qps) {
  EndpointInfo e;
  e.transport = Transport::kRc;
  e.identity = {host, "mlx5_0", 0x0002c90300010203ULL};
  e.port.link_layer = LinkLayer::kInfiniBand;
  e.port.active = true;
  e.port.lid = 0x1a;
  e.port.active_mtu = Mtu::k4096;
  e.port.max_mtu = Mtu::k4096;
  e.path.path_mtu = Mtu::k1024;
  for (uint32_t i = 0; i < n_qps; ++i) {
    e.qps.push_back({0x100 + i, (i * 7919u) & kPsnMask, std::nullopt});
  }
  return e;
}

// A key made from `k`, padded to kMinPskBytes (distinct `k`, distinct keys).
inline Psk Key(const std::string& k) {
  return *Psk::FromBytes(k.size() >= kMinPskBytes ? k
                                                  : k + std::string(kMinPskBytes - k.size(), '.'));
}

// Closes `fd` unless it is closed already (-1), and marks it closed.
inline void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Up to `n` bytes from `fd`, each read waiting at most 5 s; fewer at end of
// stream or on silence.
inline std::string ReadUpTo(int fd, size_t n) {
  std::string out;
  while (out.size() < n) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    char buf[65536];
    const ssize_t got = ::read(fd, buf, std::min(sizeof buf, n - out.size()));
    if (got <= 0) break;
    out.append(buf, static_cast<size_t>(got));
  }
  return out;
}

// One whole frame (header, payload, MAC) from a stream.
inline std::string ReadFrame(int fd) {
  std::string h = ReadUpTo(fd, kFrameHeaderBytes);
  auto header = DecodeFrameHeader(h, kDefaultMaxPayloadBytes);
  EXPECT_TRUE(header) << h.size() << " header bytes";
  return header ? h + ReadUpTo(fd, header->BodyBytes()) : h;
}

// Both sides exchange `n_qps` QPs and pass the "rtr" barrier; then `b` waits
// at "rts" and `a` at "ready": each must refuse the other's stage with
// kProtocol, naming it. `b` runs on another thread (for tcp: the server).
inline void ExpectBarrierPassesThenMismatchIsRefused(Exchanger& a, Exchanger& b, uint32_t n_qps) {
  using namespace std::chrono_literals;
  auto fb = std::async(std::launch::async, [&] {
    auto r = b.Exchange(MakeEndpoint("b", n_qps), 5s);
    if (!r) return r.error().ToString();
    auto bar = b.Barrier("rtr", 5s);
    if (!bar) return bar.error().ToString();
    auto m = b.Barrier("rts", 5s);
    return m ? std::string("passed") : m.error().ToString();
  });
  auto ra = a.Exchange(MakeEndpoint("a", n_qps), 5s);
  ASSERT_TRUE(ra) << ra.error().ToString();
  auto bar = a.Barrier("rtr", 5s);
  EXPECT_TRUE(bar) << bar.error().ToString();
  auto m = a.Barrier("ready", 5s);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::kProtocol);
  EXPECT_NE(m.error().detail.find("'rts'"), std::string::npos) << m.error().ToString();
  EXPECT_NE(fb.get().find("'ready'"), std::string::npos);
}

// Both sides exchange; `b` then waits at the "rtr" barrier while `a` aborts
// with a reason: `b`'s barrier must fail with kProtocol "the peer aborted:
// <reason>". `b` runs on another thread (for tcp: the server).
inline void ExpectAbortReachesThePeersBarrier(Exchanger& a, Exchanger& b) {
  using namespace std::chrono_literals;
  auto fb = std::async(std::launch::async, [&] {
    auto r = b.Exchange(MakeEndpoint("b", 1), 5s);
    if (!r) return r.error();
    auto bar = b.Barrier("rtr", 5s);
    return bar ? Error{} : bar.error();
  });
  ASSERT_TRUE(a.Exchange(MakeEndpoint("a", 1), 5s));
  a.Abort("ibv_modify_qp RTR failed", 1s);
  const Error e = fb.get();
  EXPECT_EQ(e.code, ErrorCode::kProtocol) << e.ToString();
  EXPECT_NE(e.detail.find("the peer aborted: ibv_modify_qp RTR failed"), std::string::npos)
      << e.ToString();
}

}  // namespace qpconnect::oob
