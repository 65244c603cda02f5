// SPDX-License-Identifier: MIT
// Which ids may share a port, and which listener a request is for, by
// rdma_cm's rules (the kernel's cma_check_port, cma_match_private_data;
// issue 39). The library's ports are TCP ports whose sockets always reuse
// addresses (link.h): these rules, not TCP's, decide what rdma_bind_addr and
// rdma_listen refuse.
//
//   REUSEADDR  two ids may be bound to one address and port when both set it
//              and neither listens; a listening id shares its port with no
//              id whose address overlaps its own.
//   AFONLY     an IPv6 id that sets it shares no address with IPv4 ids: an
//              IPv6 wildcard listener then takes no IPv4 request, and an IPv4
//              id may hold the same port. IPv4 ids are always AF-only; an IPv6
//              id that does not set it follows net.ipv6.bindv6only (0 by
//              default: a dual-stack listener).
//   overlap    the same address (SameAddress), or a wildcard on either side:
//              EADDRINUSE for the first, EADDRNOTAVAIL for the second.
//
// Thread-safety: pure functions (BindV6OnlyDefault reads /proc once).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace qpconnect::rdmacm {

// One id holding (or asking for) a port, as the rules see it.
struct PortUser {
  const sockaddr* addr = nullptr;  // its bound address, with the port
  bool reuseaddr = false;          // rdma_set_option REUSEADDR
  bool afonly = true;              // EffectiveAfOnly
  bool listening = false;
};

// 0 when `id` may hold its port beside `others` (the other ids of its port
// space; those on other ports are ignored), else EADDRINUSE or
// EADDRNOTAVAIL, and `*with` (when given) the index of the id in the way.
// `reuseaddr`: id's REUSEADDR at rdma_bind_addr, false at rdma_listen (a
// listening id shares with nobody).
int PortConflict(const PortUser& id, const std::vector<PortUser>& others, bool reuseaddr,
                 size_t* with = nullptr);

// Whether an id bound to `family` is AF-only: the program's AFONLY if it set
// one, else true for AF_INET and net.ipv6.bindv6only for AF_INET6.
bool EffectiveAfOnly(int family, std::optional<bool> option);

// Whether a listener bound to `bound` (its address, with port; AF-only or
// not) takes a request that reached `local` (the link's local end, a
// dual-stack socket's ::ffff:a.b.c.d for IPv4): 2 for the same address, 1
// for a wildcard of a family that takes it, 0 for no. A specific address
// wins over a wildcard, as natively.
int ListenerMatch(const sockaddr* bound, bool afonly, const sockaddr* local);

// A request that no listener takes (ListenerMatch 0 for each). rdma_cm
// rejects it at once with the consumer's reason (REJECTED 28) when an id
// listens on its port in its port space (the request reached rdma_cm, which
// found no listener for its address or family: an AF-only IPv6 wildcard and
// an IPv4 client), and as nobody listening (REJECTED 8) when none does; the
// library then waits a moment for one (cm.cc, kRelistenGrace).
enum class Unmatched { kWaitForListener, kRefuseNow };
// `listening`: the bound addresses (with ports) of the listening ids of the
// request's port space; `local`: where the request arrived.
Unmatched WhenNoListenerTakes(const std::vector<const sockaddr*>& listening, const sockaddr* local);

// Whether a listener bound to `bound` also holds the port's IPv4 wildcard:
// an AF-only IPv6 wildcard does (its own TCP socket is IPV6_V6ONLY, so the
// library listens on 0.0.0.0 beside it and refuses what arrives there, for
// an IPv4 client to be REJECTED 28 as natively, not find nobody listening).
bool HoldsIpv4ForRefusal(const sockaddr* bound, bool afonly);

}  // namespace qpconnect::rdmacm
