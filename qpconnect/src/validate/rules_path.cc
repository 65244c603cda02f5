// SPDX-License-Identifier: MIT
// Rules on the kernel's facts of the local RoCE path (issue 31 item 2):
// route-missing, route-other-netdev, neighbour-failed,
// neighbour-mac-mismatch, vlan-mismatch (all transports), mtu-above-netdev
// (RC, UC).
// They judge ValidationInput::roce_path, read by the local connector right
// before RTR (roce_path.h), against the peer's description (the MAC and VLAN
// it publishes for its GID's netdev, EndpointInfo::netdevs) and the local
// plan's path MTU. Silent when no facts were read; each fact that is absent
// is an unchecked note saying why.
// Sources: IBA annex A17 (RoCE v2 over IP), Linux routing and neighbour
// tables, ib_core's address resolution (rdma_addr_find_l2_eth_by_grh) and
// ib_addr.h iboe_get_mtu.
#include <initializer_list>
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

// The peer's published facts for the netdev of the GID it sends from.
const NetdevInfo* PeerNetdev(const EndpointInfo& peer) {
  if (!peer.path.sgid || peer.path.sgid->netdev.empty()) return nullptr;
  for (const NetdevInfo& n : peer.netdevs) {
    if (n.name == peer.path.sgid->netdev) return &n;
  }
  return nullptr;
}

std::string PeerNetdevMissing(const EndpointInfo& peer) {
  if (peer.netdevs.empty()) {
    return "the peer publishes no netdev facts (an older qpconnect, or not a connector)";
  }
  const std::string name =
      peer.path.sgid && !peer.path.sgid->netdev.empty() ? peer.path.sgid->netdev : "?";
  return "the peer publishes no facts for " + name + ", the netdev of its GID";
}

// One note for several rules that a missing fact leaves unchecked.
void Unchecked(FindingSink& sink, Direction dir, std::initializer_list<Rule> rules,
               const std::string& why) {
  for (Rule r : rules) sink.Unchecked(r, dir, why);
}

std::string VlanText(uint16_t id) { return id == 0 ? "untagged" : "VLAN " + std::to_string(id); }

void CheckRoute(const Context& ctx, const RocePathFacts& f, FindingSink& sink) {
  const SideView& x = ctx.local;
  const std::string netdev = f.query.local.netdev;
  const std::string peer = GidAddressText(f.query.remote);
  const std::string from = GidAddressText(f.query.local.gid);
  const std::string add_fix = "add a route to " + peer + " through " + netdev + " (ip route add " +
                              peer + " dev " + netdev +
                              ", or via the gateway of that subnet), or give this netdev an "
                              "address in the peer's subnet";
  if (!f.route_error.empty()) {
    sink.Add(
        Rule::kRouteMissing, x,
        {.x_value = from + " dev " + netdev,
         .y_value = peer,
         .message = "the kernel has no route from " + netdev + " to " + peer + ": " + f.route_error,
         .fix = add_fix});
    return;
  }
  if (!f.route) {
    sink.Unchecked(Rule::kRouteMissing, x.dir, "the route was not read: " + f.route_unknown);
    return;
  }
  const RouteFact& r = *f.route;
  if (r.type == "unreachable" || r.type == "blackhole" || r.type == "prohibit" ||
      r.type == "throw") {
    sink.Add(Rule::kRouteMissing, x,
             {.x_value = from + " dev " + netdev,
              .y_value = peer,
              .message = "the route from " + netdev + " to " + peer + " is of type " + r.type +
                         (r.table != 0 ? " (table " + std::to_string(r.table) + ")" : ""),
              .fix = "remove the " + r.type + " route, or " + add_fix});
    return;
  }
  // The peer's GID is one of this port's own (two QPs of one device, as two
  // mesh ranks on one device): the route is local and the device turns the
  // packets around itself.
  if (r.type == "local" && x.HasGid(f.query.remote)) return;
  if (r.netdev != netdev) {
    const bool local = r.type == "local" || r.netdev == "lo";
    sink.Add(Rule::kRouteOtherNetdev, x,
             {.x_value = netdev,
              .y_value = "route dev " + r.netdev,
              .message = "the route to " + peer + " leaves through " + r.netdev + ", not " +
                         netdev + ", the netdev of the GID " + from +
                         (local ? " (the address is local to this host)" : ""),
              .fix = "route " + peer + " through " + netdev + " (a rule or route bound to " +
                     netdev + "), or choose a GID on " + r.netdev});
    return;
  }
  if (r.table == 0) {
    sink.Add(Rule::kRouteMissing, x,
             {.x_value = from + " dev " + netdev,
              .y_value = peer,
              .message = "no route in any table reaches " + peer + " through " + netdev +
                         ": the kernel assumes it on " + netdev +
                         "'s link and asks its neighbours for it",
              .fix = add_fix});
  }
}

void CheckNeighbour(const Context& ctx, const RocePathFacts& f, bool on_link, FindingSink& sink) {
  const SideView& x = ctx.local;
  if (!f.neighbour) {
    Unchecked(sink, x.dir, {Rule::kNeighbourFailed, Rule::kNeighbourMacMismatch},
              f.neighbour_unknown);
    return;
  }
  const NeighbourFact& n = *f.neighbour;
  const std::string entry = n.address + " dev " + n.netdev;
  if (n.state == NeighbourState::kFailed) {
    sink.Add(Rule::kNeighbourFailed, x,
             {.x_value = entry + " FAILED",
              .message = "the kernel's neighbour entry for " + entry +
                         " is FAILED: nobody answered its ARP or neighbour solicitation, so RTR "
                         "would time out resolving the MAC",
              .fix = "check that " + n.address + " is up on " + n.netdev +
                     "'s link and answers ARP (arp_ignore, a firewall, the VLAN); or set the "
                     "entry (ip neigh replace " +
                     n.address + " lladdr MAC dev " + n.netdev + ")"});
    return;
  }
  if (n.state == NeighbourState::kIncomplete || n.state == NeighbourState::kNone || !n.mac) {
    const std::string why = "the neighbour entry for " + entry + " is " +
                            NeighbourStateName(n.state) + " (being resolved; no MAC yet)";
    Unchecked(sink, x.dir, {Rule::kNeighbourFailed, Rule::kNeighbourMacMismatch}, why);
    return;
  }
  if (!on_link) {
    sink.Unchecked(Rule::kNeighbourMacMismatch, x.dir,
                   "the next hop is the gateway " + n.address +
                       ": its MAC is not the peer's and is not compared");
    return;
  }
  const NetdevInfo* peer = PeerNetdev(*ctx.remote.ep);
  if (peer == nullptr) {
    sink.Unchecked(Rule::kNeighbourMacMismatch, x.dir, PeerNetdevMissing(*ctx.remote.ep));
    return;
  }
  if (*n.mac != peer->mac) {
    sink.Add(Rule::kNeighbourMacMismatch, x,
             {.x_value = MacToString(*n.mac) + " " + NeighbourStateName(n.state),
              .y_value = peer->name + " " + MacToString(peer->mac),
              .message = "the neighbour entry for " + entry + " is " + MacToString(*n.mac) + " " +
                         NeighbourStateName(n.state) + ", but the peer's " + peer->name + " is " +
                         MacToString(peer->mac) + ": every packet would go to the wrong MAC",
              .fix = "ip neigh replace " + n.address + " lladdr " + MacToString(peer->mac) +
                     " dev " + n.netdev + " (or ip neigh del it and let ARP resolve it)"});
  }
}

void CheckNetdev(const Context& ctx, const RocePathFacts& f, bool on_link, FindingSink& sink) {
  const SideView& x = ctx.local;
  if (!f.netdev) {
    Unchecked(sink, x.dir, {Rule::kVlanMismatch, Rule::kMtuAboveNetdev}, f.netdev_unknown);
    return;
  }
  const NetdevInfo& nd = *f.netdev;
  const NetdevInfo* peer = PeerNetdev(*ctx.remote.ep);
  if (!on_link) {
    sink.Unchecked(Rule::kVlanMismatch, x.dir,
                   "the peer is reached through a gateway: the two VLANs may differ");
  } else if (peer == nullptr) {
    sink.Unchecked(Rule::kVlanMismatch, x.dir, PeerNetdevMissing(*ctx.remote.ep));
  } else if (nd.vlan_id != peer->vlan_id) {
    sink.Add(Rule::kVlanMismatch, x,
             {.x_value = nd.name + " " + VlanText(nd.vlan_id),
              .y_value = peer->name + " " + VlanText(peer->vlan_id),
              .message = "this side's " + nd.name + " is " + VlanText(nd.vlan_id) +
                         " and the peer's " + peer->name + " " + VlanText(peer->vlan_id) +
                         ", on one link without a gateway: their frames never meet",
              .fix = "use GIDs of netdevs on the same VLAN on both sides (-g), or put both "
                     "netdevs on one VLAN"});
  }
  uint32_t limit = nd.mtu;
  std::string what = nd.name + " MTU " + std::to_string(nd.mtu);
  if (f.route && f.route->mtu != 0 && (limit == 0 || f.route->mtu < limit)) {
    limit = f.route->mtu;
    what = "route MTU " + std::to_string(f.route->mtu);
  }
  if (limit == 0) {
    sink.Unchecked(Rule::kMtuAboveNetdev, x.dir, nd.name + "'s MTU is unknown");
    return;
  }
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const int bytes = MtuBytes(qps[i].path_mtu);
    if (bytes == 0 || static_cast<uint32_t>(bytes) + kRoceHeaderAllowance <= limit) continue;
    int fits = 4096;
    while (fits >= 256 && static_cast<uint32_t>(fits) + kRoceHeaderAllowance > limit) fits /= 2;
    sink.Add(Rule::kMtuAboveNetdev, x,
             {.qp = i,
              .x_value = std::to_string(bytes),
              .y_value = what,
              .message = "path_mtu " + std::to_string(bytes) + " plus " +
                         std::to_string(kRoceHeaderAllowance) + " bytes of RoCE headers exceeds " +
                         what + ": full-size packets would be dropped",
              .fix = fits >= 256 ? "use path_mtu " + std::to_string(fits) + " or less (-m " +
                                       std::to_string(fits) + "), or raise the MTU of " + nd.name
                                 : "raise the MTU of " + nd.name + " to at least " +
                                       std::to_string(256 + kRoceHeaderAllowance)});
  }
}

}  // namespace

void CheckPathRules(const Context& ctx, FindingSink& sink) {
  if (ctx.roce_path == nullptr || !ctx.local.IsEthernet()) return;
  const RocePathFacts& f = *ctx.roce_path;
  CheckRoute(ctx, f, sink);
  // The next hop is the peer itself unless a gateway is known to be between.
  const bool on_link = !f.route || f.route->gateway.empty();
  CheckNeighbour(ctx, f, on_link, sink);
  CheckNetdev(ctx, f, on_link, sink);
}

}  // namespace qpconnect::validate_internal
