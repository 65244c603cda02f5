// SPDX-License-Identifier: MIT
// The kernel's facts on one RoCE path (issue 31 item 2): for the GID pair a
// connector chose, the route from the local GID's netdev to the peer's
// address, the neighbour entry of the next hop, and the netdev itself (MAC,
// VLAN, MTU). RoCE v2 packets are IP packets: the kernel routes them and
// resolves the next hop's MAC when the QP moves to RTR, and a wrong fact
// there shows up only as ETIMEDOUT at RTR or as "transport retry counter
// exceeded" at the first send. Read right before RTR, the facts let the
// validator name the fault first (rules_path.cc: route-missing,
// route-other-netdev, neighbour-failed, neighbour-mac-mismatch,
// vlan-mismatch, mtu-above-netdev).
//
// Plain values: the verbs layer reads them from the kernel (rtnetlink,
// qpconnect/verbs/kernel_path.h, behind QpEnv::ReadPath); tests build them.
// Each fact is present or says why it is not (an empty reason with an absent
// fact never happens).
//
// Thread-safety: plain values and pure functions. Part of qpconnect::core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "qpconnect/diagnostic.h"
#include "qpconnect/endpoint.h"

namespace qpconnect {

// What is asked: the path from the local GID (its netdev and address) to the
// peer's GID.
struct RocePathQuery {
  GidEntry local;  // the GID this side sends from; netdev set on RoCE
  Gid remote{};    // the peer's GID
};

// The GID as the IP address RoCE v2 sends from or to: "10.99.0.1" for an
// IPv4-mapped GID, IPv6 text otherwise.
std::string GidAddressText(const Gid& gid);

// States of a kernel neighbour entry (NUD_*), as `ip neigh` prints them.
enum class NeighbourState : uint8_t {
  kNone = 0,  // NUD_NONE: created, never resolved
  kIncomplete,
  kReachable,
  kStale,
  kDelay,
  kProbe,
  kFailed,
  kNoArp,
  kPermanent,
};
const char* NeighbourStateName(NeighbourState s);  // "NONE", "INCOMPLETE", ... "PERMANENT"

// The route the kernel gives for the query (a lookup bound to the GID's
// netdev, from the GID's address, as ib_core and rxe do it).
struct RouteFact {
  std::string netdev;   // the netdev it leaves through ("lo": the address is local)
  std::string gateway;  // the next hop when routed; empty: the peer is on the link
  std::string type;     // "unicast", "local", "unreachable", "blackhole", "prohibit", ...
  // The routing table that matched. 0: none did, and the kernel assumed the
  // peer on the netdev's link (its fallback for a lookup bound to a netdev).
  uint32_t table = 0;
  uint32_t mtu = 0;  // the route's MTU metric in bytes; 0 none
};

// The neighbour entry of the next hop (the gateway, or the peer on the link).
struct NeighbourFact {
  std::string address;
  std::string netdev;
  NeighbourState state = NeighbourState::kNone;
  std::optional<MacAddress> mac;  // absent while unresolved
};

struct RocePathFacts {
  RocePathQuery query;
  // The local GID's netdev now. Absent: netdev_unknown says why.
  std::optional<NetdevInfo> netdev;
  std::string netdev_unknown;
  // The route. Absent: route_error names the kernel's refusal (a fact: no
  // route, "Network is unreachable"), or route_unknown why it was not asked.
  std::optional<RouteFact> route;
  std::string route_error;
  std::string route_unknown;
  // The next hop's neighbour entry. Absent: neighbour_unknown says why (no
  // entry yet: the kernel resolves it at RTR; or it could not be read).
  std::optional<NeighbourFact> neighbour;
  std::string neighbour_unknown;
};

// Bytes the kernel keeps for RoCE headers between the netdev MTU and the
// largest path MTU it offers (ib_addr.h iboe_get_mtu: GRH 40, UDP 8, BTH 12,
// XRC 4, AtomicETH 28, ICRC 4). A path MTU above netdev MTU - 96 makes full
// packets larger than the netdev sends.
constexpr uint32_t kRoceHeaderAllowance = 96;

// The facts in one line for humans: "veth0 (02:00:0a:63:00:01, untagged, MTU
// 1500) -> 10.99.0.2: route dev veth0 table 100, on link; neighbour
// 02:00:0a:63:00:02 PERMANENT".
std::string RocePathText(const RocePathFacts& facts);

// The info finding "path-facts" (direction local) carrying RocePathText().
Finding RocePathFinding(const RocePathFacts& facts);

}  // namespace qpconnect
