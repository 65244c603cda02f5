// SPDX-License-Identifier: MIT
#include "address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "device_map.h"
#include "qpconnect/verbs/device_query.h"

namespace qpconnect::rdmacm {

Result<Placement> PlaceAddressNow(const sockaddr* addr);

namespace {

// The netdev holding `addr` (an Unmapped address), or "" if none does. An
// IPv6 address with a scope id is looked for on that netdev first (a
// link-local address may be on several: fe80::1%mgmt0).
std::string NetdevOf(const sockaddr* addr) {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  const uint32_t scope = ScopeOf(addr);
  std::string name;
  for (ifaddrs* i = all; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != addr->sa_family) continue;
    sockaddr_storage held = Unmapped(i->ifa_addr);
    if (addr->sa_family == AF_INET6)  // the scope is the netdev's, not the list's
      reinterpret_cast<sockaddr_in6*>(&held)->sin6_scope_id = 0;
    if (!SameAddress(reinterpret_cast<const sockaddr*>(&held), addr)) continue;
    if (scope == 0 || if_nametoindex(i->ifa_name) == scope) {
      name = i->ifa_name;
      break;
    }
    if (name.empty()) name = i->ifa_name;  // on another netdev than the scope says
  }
  freeifaddrs(all);
  return name;
}

// 1. A RoCE GID equal to the address, on the netdev that holds it (the GID
// tables read by the verbs layer's one reader).
std::optional<Placement> FromRoceGid(const sockaddr* addr, const std::string& netdev,
                                     const std::vector<Device*>& devices) {
  ibv_gid want{};
  if (!AddressGid(addr, want) || netdev.empty()) return std::nullopt;
  for (Device* d : devices) {
    for (uint8_t port = 1; port <= d->ports; ++port) {
      ibv_port_attr pa{};
      if (ibv_query_port(d->ctx, port, &pa) != 0) continue;
      auto gids = verbs::QueryGids(*d->ctx, port, static_cast<uint32_t>(pa.gid_tbl_len));
      if (!gids) continue;
      for (const GidEntry& g : *gids) {
        if (g.type == GidType::kIb || g.netdev != netdev) continue;
        if (std::memcmp(g.gid.data(), want.raw, 16) != 0) continue;
        Placement p;
        p.device = d;
        p.port = port;
        p.gid_index = g.index;
        p.how = HostText(addr) + " is on " + netdev + ", the netdev of " + d->name + " port " +
                std::to_string(p.port) + " (GID index " + std::to_string(g.index) + ")";
        return p;
      }
    }
  }
  return std::nullopt;
}

// "DEV[:PORT[:GID_INDEX]]" -> device, port and GID; nullopt (with `why`) if
// no such device or port.
std::optional<Placement> Named(const std::string& spec, const std::vector<Device*>& devices,
                               std::string& why) {
  std::string name = spec;
  int port = 1;
  int gid = -1;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    name = spec.substr(0, colon);
    port = std::atoi(spec.c_str() + colon + 1);
    if (auto second = spec.find(':', colon + 1); second != std::string::npos)
      gid = std::atoi(spec.c_str() + second + 1);
  }
  for (Device* d : devices) {
    if (d->name != name) continue;
    if (port < 1 || port > d->ports) {
      why = d->name + " has no port " + spec.substr(name.size() + 1);
      return std::nullopt;
    }
    Placement p;
    p.device = d;
    p.port = static_cast<uint8_t>(port);
    if (gid >= 0) p.gid_index = static_cast<uint16_t>(gid);  // judged when described
    return p;
  }
  why = "there is no RDMA device '" + name + "'";
  return std::nullopt;
}

}  // namespace

Result<Placement> PlaceAddress(const sockaddr* given) {
  const sockaddr_storage unmapped = Unmapped(given);
  const auto* addr = reinterpret_cast<const sockaddr*>(&unmapped);
  // A placement holds for a second: a thousand ids resolving from one address
  // look it up once, and a GID or address change is seen soon after.
  struct Cached {
    Placement placement;
    std::chrono::steady_clock::time_point until;
  };
  static auto* cache = new std::map<std::string, Cached>;
  const std::string key = HostText(addr);
  const auto now = std::chrono::steady_clock::now();
  if (auto it = cache->find(key); it != cache->end() && now < it->second.until)
    return it->second.placement;
  auto placed = PlaceAddressNow(addr);
  if (placed) (*cache)[key] = Cached{*placed, now + std::chrono::seconds(1)};
  return placed;
}

Result<Placement> PlaceAddressNow(const sockaddr* given) {
  auto devices = Devices();
  if (!devices) return std::move(devices).error();
  // ::ffff:a.b.c.d (a dual-stack listener's IPv4 peer) is a.b.c.d here.
  const sockaddr_storage unmapped = Unmapped(given);
  const auto* addr = reinterpret_cast<const sockaddr*>(&unmapped);
  std::string host = HostText(addr);
  std::string netdev = NetdevOf(addr);
  if (auto p = FromRoceGid(addr, netdev, **devices)) return *p;

  if (auto hit = LookUpDeviceMap(addr, std::getenv("QPCM_DEVICES"), std::getenv("QPCM_CONFIG"))) {
    std::string why;
    auto p = Named(hit->spec, **devices, why);
    if (!p)
      return Error(ErrorCode::kNotFound, ENODEV, "map " + host + " to an RDMA device", hit->source,
                   hit->source + " maps " + host + " to '" + hit->spec + "', but " + why);
    p->how = host + ": " + hit->source + " maps it to " + p->device->name + " port " +
             std::to_string(p->port) +
             (p->gid_index ? " GID index " + std::to_string(*p->gid_index) : std::string());
    return *p;
  }

  std::vector<Placement> active;
  std::string ports;
  for (Device* d : **devices) {
    for (uint8_t port = 1; port <= d->ports; ++port) {
      ibv_port_attr attr{};
      if (ibv_query_port(d->ctx, port, &attr) != 0 || attr.state != IBV_PORT_ACTIVE) continue;
      Placement p;
      p.device = d;
      p.port = port;
      active.push_back(p);
      ports += (ports.empty() ? "" : ", ") + d->name + ":" + std::to_string(port);
    }
  }
  if (active.size() == 1) {
    active[0].how = host + ": not on an RDMA netdev and not mapped; " + active[0].device->name +
                    " port " + std::to_string(active[0].port) + " is the only active port";
    return active[0];
  }
  std::string where =
      netdev.empty() ? "on no local netdev" : "on " + netdev + ", which has no RDMA device";
  return Error(ErrorCode::kNotFound, ENODEV, "map " + host + " to an RDMA device", "QPCM_DEVICES",
               host + " is " + where + "; neither QPCM_DEVICES nor QPCM_CONFIG names it; and " +
                   std::to_string(active.size()) + " ports are active (" +
                   (ports.empty() ? "none" : ports) + "): set QPCM_DEVICES=" + host +
                   "=DEV[:PORT] (or qp-cm --device " + host + "=DEV)");
}

}  // namespace qpconnect::rdmacm
