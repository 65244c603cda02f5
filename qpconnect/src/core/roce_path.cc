// SPDX-License-Identifier: MIT
#include "qpconnect/roce_path.h"

#include <string>

namespace qpconnect {

std::string GidAddressText(const Gid& gid) {
  if (!IsIpv4MappedGid(gid)) return GidToString(gid);
  return std::to_string(gid[12]) + "." + std::to_string(gid[13]) + "." + std::to_string(gid[14]) +
         "." + std::to_string(gid[15]);
}

const char* NeighbourStateName(NeighbourState s) {
  switch (s) {
    case NeighbourState::kNone:
      return "NONE";
    case NeighbourState::kIncomplete:
      return "INCOMPLETE";
    case NeighbourState::kReachable:
      return "REACHABLE";
    case NeighbourState::kStale:
      return "STALE";
    case NeighbourState::kDelay:
      return "DELAY";
    case NeighbourState::kProbe:
      return "PROBE";
    case NeighbourState::kFailed:
      return "FAILED";
    case NeighbourState::kNoArp:
      return "NOARP";
    case NeighbourState::kPermanent:
      return "PERMANENT";
  }
  return "UNKNOWN";
}

std::string RocePathText(const RocePathFacts& f) {
  const std::string name = f.query.local.netdev.empty() ? "?" : f.query.local.netdev;
  std::string s = name;
  if (f.netdev) {
    s += " (" + MacToString(f.netdev->mac) + ", " +
         (f.netdev->vlan_id == 0 ? std::string("untagged")
                                 : "VLAN " + std::to_string(f.netdev->vlan_id)) +
         ", MTU " + std::to_string(f.netdev->mtu) + ")";
  } else {
    s += " (" + f.netdev_unknown + ")";
  }
  s += " -> " + GidAddressText(f.query.remote) + ": ";
  if (f.route) {
    s += "route dev " + f.route->netdev;
    if (f.route->type != "unicast") s += " " + f.route->type;
    s += f.route->table == 0 ? std::string(" (no table: assumed on link)")
                             : " table " + std::to_string(f.route->table);
    s += f.route->gateway.empty() ? std::string(", on link") : ", via " + f.route->gateway;
    if (f.route->mtu != 0) s += ", mtu " + std::to_string(f.route->mtu);
  } else if (!f.route_error.empty()) {
    s += "no route (" + f.route_error + ")";
  } else {
    s += "route unknown (" + f.route_unknown + ")";
  }
  s += "; neighbour ";
  if (f.neighbour) {
    s += f.neighbour->address + " ";
    if (f.neighbour->mac) s += MacToString(*f.neighbour->mac) + " ";
    s += NeighbourStateName(f.neighbour->state);
  } else {
    s += f.neighbour_unknown;
  }
  return s;
}

Finding RocePathFinding(const RocePathFacts& facts) {
  return Finding{.id = "path-facts",
                 .severity = Severity::kInfo,
                 .transports = kAllTransports,
                 .attribute = "dgid",
                 .direction = Direction::kLocal,
                 .qp_index = std::nullopt,
                 .local_value = GidAddressText(facts.query.local.gid),
                 .remote_value = GidAddressText(facts.query.remote),
                 .message = "the kernel's path: " + RocePathText(facts),
                 .fix = {}};
}

}  // namespace qpconnect
