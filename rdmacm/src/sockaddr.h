// Socket addresses as the library reads and prints them: text, port, family
// length, wildcard, the RoCE GID an address would have. Split from address.h
// (which includes this) so that code needing only these (the CM and its unit
// tests) does not link the device mapping.
//
// Thread-safety: pure functions.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace qpconnect::rdmacm {

// The GID `addr` would have on a RoCE port (IPv4 as ::ffff:a.b.c.d); false
// for a family that has none.
bool AddressGid(const sockaddr* addr, ibv_gid& gid);

// "10.77.0.1" / "fe80::1" ("?" for another family).
std::string HostText(const sockaddr* addr);
// "10.77.0.1:7174" / "[fe80::1]:7174".
std::string AddressText(const sockaddr* addr);
// True for 0.0.0.0 and ::.
bool IsWildcard(const sockaddr* addr);
socklen_t AddressLength(const sockaddr* addr);
uint16_t PortOf(const sockaddr* addr);  // host byte order
void SetPort(sockaddr* addr, uint16_t port);

}  // namespace qpconnect::rdmacm
