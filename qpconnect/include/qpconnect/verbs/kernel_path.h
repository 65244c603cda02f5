// SPDX-License-Identifier: MIT
// The kernel's view of a RoCE path, read over rtnetlink (NETLINK_ROUTE)
// through libmnl, as iproute2's `ip` reads it (issue 31 item 2):
//
//   RTM_GETLINK   a netdev by name: MAC (IFLA_ADDRESS), MTU, VLAN id
//                 (IFLA_LINKINFO kind "vlan", IFLA_VLAN_ID)
//   RTM_GETROUTE  the route to the peer's address bound to the GID's netdev,
//                 from the GID's address (RTA_OIF, RTA_SRC), as ib_core and
//                 rxe look it up; RTM_F_LOOKUP_TABLE so the reply names the
//                 table that matched (0: none, the kernel assumed the peer on
//                 the link)
//   RTM_GETNEIGH  the next hop's neighbour entry: NUD state and MAC
//
// The facts are judged in core (rules_path.cc, roce_path.h); this file only
// reads them. The connector reaches it through QpEnv::ReadPath and
// QpEnv::ReadNetdevs (qp_control.h), which unit tests replace.
//
// Thread-safety: each call opens and closes its own netlink socket.
#pragma once

#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "qpconnect/roce_path.h"

namespace qpconnect::verbs {

// The netdev `name` now. kNotFound when the kernel has no such netdev; kIo
// (with errno) when the socket or the query fails.
Result<NetdevInfo> ReadNetdev(const std::string& name);

// The route, neighbour and netdev facts for `query` now. Never fails as a
// whole: each fact that could not be read is absent with its reason
// (RocePathFacts). REQUIRES: query.local.netdev names the GID's netdev (an
// empty name gives facts that are all absent, saying so).
RocePathFacts ReadKernelPath(const RocePathQuery& query);

}  // namespace qpconnect::verbs
