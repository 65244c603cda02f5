// Sample endpoints and keys, and the checks every exchanger must pass, shared
// by the tcp, file and stdio exchanger tests.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/exchanger.h"
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

inline Psk Key(const std::string& k) { return *Psk::FromBytes(k); }

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

}  // namespace qpconnect::oob
