// SPDX-License-Identifier: MIT
// The kernel's rdma_cm ids as destinations of the QPs they carry
// (`rdma resource show cm_id`, netlink RDMA_NLDEV_CMD_RES_CM_ID_GET; the
// parser is in netlink.h). rdma_cm ids are core kernel objects, so every
// driver shows them: an rdma_cm program's QP has one whose source and
// destination addresses are the two ends of its connection.
//
// A snapshot keeps the addresses as text, as read (KernelQp::src_addr and
// dst_addr, snapshot.h); AddSnapshot() turns the destination into the QP's
// destination GID with DestinationGidOfCmId() below.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/observe/snapshot.h"

namespace qpconnect {

// One rdma_cm id as the tracker lists it (the fields a destination needs).
struct KernelCmId {
  std::string device;    // the device it is bound to
  uint32_t lqpn = 0;     // its QP's number; 0 without a QP (a listener, an id not connected)
  int pid = 0;           // owning process; 0 for a kernel id
  std::string state;     // "CONNECT", "LISTEN", ... (iproute2's names); "" unknown
  std::string src_addr;  // SockaddrText() of the source; "" when unset
  std::string dst_addr;  // SockaddrText() of the destination; "" when unset
};

// The text of a struct sockaddr the kernel reported (`len` bytes at `data`,
// a __kernel_sockaddr_storage): "10.99.0.1:7174" (AF_INET), "[fe80::1]:7174"
// (AF_INET6), "[fe80::2:c903:1]" (AF_IB: its GID; the service id is left
// out). "" for another family or too few bytes.
std::string SockaddrText(const void* data, size_t len);

// The GID an address of SockaddrText() names on RoCE: the IPv4-mapped GID
// (::ffff:a.b.c.d) of an IPv4 address, the address itself for IPv6 and
// AF_IB. nullopt when the text is none of these.
std::optional<Gid> GidOfAddressText(const std::string& text);

// The destination GID of a QP whose cm_id goes from `src_addr` to
// `dst_addr`, given the GIDs of the QP's own port (its host identity):
// GidOfAddressText(dst_addr), but only when GidOfAddressText(src_addr) is
// one of `own_gids`, i.e. when this port's addresses are its GIDs (RoCE).
// On InfiniBand (an IPoIB address is no GID), iWARP, or with the port's
// GIDs unknown, nullopt: the address would name no port and rule out the
// true peer.
std::optional<Gid> DestinationGidOfCmId(const std::string& src_addr, const std::string& dst_addr,
                                        std::span<const Gid> own_gids);

// Copies each cm_id's addresses onto the QP it carries: the QP of `qps` on
// the same device with lqpn equal to its QP number (the one of the same
// pid first, when several QPs share the number across processes).
void AttachCmIds(const std::vector<KernelCmId>& cm_ids, std::span<KernelQp> qps);

}  // namespace qpconnect
