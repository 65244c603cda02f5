// Sample endpoints and keys shared by the exchanger tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "qpconnect/endpoint.h"
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

}  // namespace qpconnect::oob
