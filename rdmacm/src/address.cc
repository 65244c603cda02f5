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

#include "qpconnect/verbs/device_query.h"

namespace qpconnect::rdmacm {

Result<Placement> PlaceAddressNow(const sockaddr* addr);

namespace {

// The netdev holding `addr`, or "" if none does.
std::string NetdevOf(const sockaddr* addr) {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string name;
  for (ifaddrs* i = all; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != addr->sa_family) continue;
    if (addr->sa_family == AF_INET &&
        std::memcmp(&reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr,
                    &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, 4) == 0)
      name = i->ifa_name;
    if (addr->sa_family == AF_INET6 &&
        std::memcmp(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr,
                    &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, 16) == 0)
      name = i->ifa_name;
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

// 2. QPCM_DEVICES, then QPCM_CONFIG: the spec for `host`, and where it was found.
std::optional<std::pair<std::string, std::string>> MappedSpec(const std::string& host) {
  if (const char* env = std::getenv("QPCM_DEVICES"); env != nullptr && *env != '\0') {
    std::stringstream list(env);
    std::string item;
    while (std::getline(list, item, ',')) {
      auto eq = item.find('=');
      if (eq != std::string::npos && item.substr(0, eq) == host)
        return std::make_pair(item.substr(eq + 1), std::string("QPCM_DEVICES"));
    }
  }
  if (const char* path = std::getenv("QPCM_CONFIG"); path != nullptr && *path != '\0') {
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) {
      if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      std::stringstream words(line);
      std::string addr, spec;
      if (words >> addr >> spec && addr == host)
        return std::make_pair(spec, std::string("QPCM_CONFIG (") + path + ")");
    }
  }
  return std::nullopt;
}

}  // namespace

Result<Placement> PlaceAddress(const sockaddr* addr) {
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

Result<Placement> PlaceAddressNow(const sockaddr* addr) {
  auto devices = Devices();
  if (!devices) return std::move(devices).error();
  std::string host = HostText(addr);
  std::string netdev = NetdevOf(addr);
  if (auto p = FromRoceGid(addr, netdev, **devices)) return *p;

  if (auto mapped = MappedSpec(host)) {
    std::string why;
    auto p = Named(mapped->first, **devices, why);
    if (!p)
      return Error(ErrorCode::kNotFound, ENODEV, "map " + host + " to an RDMA device",
                   mapped->second,
                   mapped->second + " maps " + host + " to '" + mapped->first + "', but " + why);
    p->how = host + ": " + mapped->second + " maps it to " + p->device->name + " port " +
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
