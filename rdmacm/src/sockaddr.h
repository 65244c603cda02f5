// SPDX-License-Identifier: MIT
// Socket addresses as the library reads and prints them: text, port, family
// length, wildcard, the RoCE GID an address would have, and how two are
// matched (issue 39). Split from address.h (which includes this) so that
// code needing only these (the CM and its unit tests) does not link the
// device mapping.
//
// An address has several spellings: a dual-stack socket names an IPv4 peer
// ::ffff:a.b.c.d, an IPv6 address may be written with or without zeros or in
// capitals, and a link-local one carries a scope id (fe80::1%mgmt0). Every
// match of addresses (the device map, the netdev holding it, the listener a
// request is for) compares Unmapped() forms with SameAddress(); what a
// program sees keeps its own spelling.
//
// Thread-safety: pure functions.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace qpconnect::rdmacm {

// The GID `addr` would have on a RoCE port (IPv4 as ::ffff:a.b.c.d); false
// for a family that has none.
bool AddressGid(const sockaddr* addr, ibv_gid& gid);

// "10.77.0.1" / "fd77::1" / "fe80::1%mgmt0" (a scope id by its netdev's
// name, or its number when no netdev has it) ("?" for another family).
std::string HostText(const sockaddr* addr);
// "10.77.0.1:7174" / "[fe80::1%mgmt0]:7174".
std::string AddressText(const sockaddr* addr);

// `addr` with an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the AF_INET
// address it stands for, port kept; any other address copied as it is.
sockaddr_storage Unmapped(const sockaddr* addr);
// Whether `a` and `b` name one address: their Unmapped() forms have the same
// family and bytes, and, for IPv6, the same scope id when both have one (as
// rdma_cm's cma_addr_cmp). Ports are not compared.
bool SameAddress(const sockaddr* a, const sockaddr* b);
// Any spelling of an IP address, as getaddrinfo(3) reads it numerically:
// "10.77.0.1", "::ffff:10.77.0.1", "FD77:0:0::1", "[fd77::1]",
// "fe80::1%mgmt0", "fe80::1%3". The result is Unmapped(), port 0. false when
// `text` is not an address.
bool ParseAddress(std::string_view text, sockaddr_storage& out);
// The IPv6 scope id of `addr` (0: none, or not IPv6).
uint32_t ScopeOf(const sockaddr* addr);
// True for 0.0.0.0 and ::.
bool IsWildcard(const sockaddr* addr);
// True for 127.0.0.0/8, ::1 and ::ffff:127.x.y.z.
bool IsLoopback(const sockaddr* addr);
socklen_t AddressLength(const sockaddr* addr);
uint16_t PortOf(const sockaddr* addr);  // host byte order
void SetPort(sockaddr* addr, uint16_t port);

}  // namespace qpconnect::rdmacm
