// SPDX-License-Identifier: MIT
// Which RDMA device, port and GID serve a local IP address (issue 29, item 3).
//
// In order:
//   1. the address is on a netdev with a RoCE GID for it (as rdma_cm finds
//      it): that device, port and GID;
//   2. QPCM_DEVICES ("ADDR=DEV[:PORT[:GID]],...") or the file QPCM_CONFIG
//      (lines "ADDR DEV[:PORT[:GID]]", '#' comments) names the address: that
//      device and port, and that GID index or the one qp-connect would choose
//      (RoCE v2, IPv4 first);
//   3. the host has exactly one active port: that one.
// Otherwise kNotFound, saying what was tried. Every placement carries the
// sentence that says which mapping was used, for every later error.
//
// Thread-safety: REQUIRES library_mutex held (it opens devices; lock.h).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "devices.h"
#include "qpconnect/result.h"
#include "sockaddr.h"

namespace qpconnect::rdmacm {

struct Placement {
  Device* device = nullptr;
  uint8_t port = 1;
  std::optional<uint16_t> gid_index;  // nullopt: chosen automatically
  std::string how;                    // "10.77.0.1: QPCM_DEVICES maps it to rxe0 port 1"
};

// Cached for a second per address (PlaceAddressNow asks afresh).
Result<Placement> PlaceAddress(const sockaddr* addr) QPCM_REQUIRES(library_mutex);
Result<Placement> PlaceAddressNow(const sockaddr* addr) QPCM_REQUIRES(library_mutex);

// AddressGid, AddressText, IsWildcard, AddressLength, PortOf, SetPort: sockaddr.h.

}  // namespace qpconnect::rdmacm
