// SPDX-License-Identifier: MIT
#include "qpconnect/observe/kernel_paths.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "qpconnect/verbs/kernel_path.h"

namespace qpconnect::kernel {
namespace {

namespace fs = std::filesystem;

std::string FirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

bool PastInit(const std::string& state) {
  return state == "RTR" || state == "RTS" || state == "SQD" || state == "SQE" || state == "ERR";
}

bool IsRoce(const std::vector<GidEntry>& gids) {
  return std::any_of(gids.begin(), gids.end(), [](const GidEntry& g) {
    return g.type == GidType::kRoceV1 || g.type == GidType::kRoceV2;
  });
}

std::string QpName(const KernelQp& q) { return q.device + " QP " + std::to_string(q.lqpn); }

}  // namespace

std::vector<GidEntry> ReadSysfsGids(const std::string& device, uint8_t port,
                                    const std::string& sysfs_root) {
  const fs::path base =
      fs::path(sysfs_root) / "class/infiniband" / device / "ports" / std::to_string(port);
  std::vector<GidEntry> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base / "gids", ec)) {
    const std::string name = e.path().filename().string();
    char* end = nullptr;
    const unsigned long index = std::strtoul(name.c_str(), &end, 10);
    if (end == name.c_str() || *end != '\0' || index > 0xffff) continue;
    // sysfs prints "0000:0000:0000:0000:0000:ffff:0a63:0001".
    std::string text = FirstLine(e.path());
    std::erase(text, ':');
    if (text.size() != 32) continue;
    Gid gid{};
    bool ok = true;
    for (size_t i = 0; i < 16 && ok; ++i) {
      const std::string byte = text.substr(i * 2, 2);
      char* b = nullptr;
      gid[i] = static_cast<uint8_t>(std::strtoul(byte.c_str(), &b, 16));
      ok = b == byte.c_str() + 2;
    }
    if (!ok || std::all_of(gid.begin(), gid.end(), [](uint8_t x) { return x == 0; })) continue;
    const std::string type = FirstLine(base / "gid_attrs/types" / name);
    GidEntry g;
    g.index = static_cast<uint16_t>(index);
    g.gid = gid;
    g.type = type == "RoCE v2"                                       ? GidType::kRoceV2
             : type.rfind("IB/RoCE v1", 0) == 0 || type == "RoCE v1" ? GidType::kRoceV1
                                                                     : GidType::kIb;
    g.family = FamilyOfGid(gid, g.type);
    g.netdev = FirstLine(base / "gid_attrs/ndevs" / name);
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return out;
}

std::optional<GidEntry> RoutableGid(const std::vector<GidEntry>& gids) {
  std::optional<GidEntry> v6;
  for (const GidEntry& g : gids) {
    if (g.type != GidType::kRoceV2 || IsLinkLocalGid(g.gid)) continue;
    if (IsIpv4MappedGid(g.gid)) return g;
    if (!v6) v6 = g;
  }
  return v6;
}

PathSources KernelPathSources() {
  PathSources s;
  s.gids = [](const std::string& device, uint8_t port) { return ReadSysfsGids(device, port); };
  s.path = [](const RocePathQuery& q) { return verbs::ReadKernelPath(q); };
  s.netdev = [](const std::string& name) -> std::optional<NetdevInfo> {
    auto n = verbs::ReadNetdev(name);
    if (!n) return std::nullopt;
    return *n;
  };
  return s;
}

std::vector<ObservedPath> ReadQpPaths(const KernelSample& sample, const PathSources& sources) {
  std::vector<ObservedPath> out;
  for (const KernelQp& q : sample.qps) {
    if ((q.type != "RC" && q.type != "UC") || !PastInit(q.state) || !q.rqpn || *q.rqpn == 0) {
      continue;
    }
    const std::vector<GidEntry> gids = sources.gids(q.device, q.port);
    if (!IsRoce(gids)) continue;
    ObservedPath p;
    p.device = q.device;
    p.port = q.port;
    p.lqpn = q.lqpn;
    p.pid = q.pid;
    const std::optional<GidEntry> src = RoutableGid(gids);
    if (src) {
      p.source = GidAddressText(src->gid);
      p.netdev = src->netdev;
    } else {
      p.source_gone = true;
    }
    const auto peer = std::find_if(sample.qps.begin(), sample.qps.end(), [&](const KernelQp& k) {
      return k.lqpn == *q.rqpn && k.rqpn == q.lqpn && &k != &q;
    });
    std::optional<GidEntry> dst;
    if (peer == sample.qps.end()) {
      p.unknown = "the kernel does not show a QP's destination GID, and the QP its rqpn " +
                  std::to_string(*q.rqpn) + " names is not in this snapshot";
    } else {
      p.peer = QpName(*peer);
      dst = RoutableGid(sources.gids(peer->device, peer->port));
      if (dst) {
        p.destination = GidAddressText(dst->gid);
        p.peer_netdev = dst->netdev;
        if (auto n = sources.netdev(dst->netdev)) p.peer_mac = MacToString(n->mac);
      } else {
        p.destination_gone = true;
      }
    }
    if (p.source_gone) {
      p.unknown = q.device + " port " + std::to_string(q.port) +
                  " has no routable RoCE v2 GID: the path cannot be read";
    } else if (p.destination_gone) {
      p.unknown = p.peer + "'s port has no routable RoCE v2 GID: the path cannot be read";
    }
    if (src && dst) {
      const RocePathFacts f = sources.path({*src, dst->gid});
      p.facts = RocePathText(f);
      p.route_error = f.route_error;
      if (f.neighbour) {
        p.neighbour_address = f.neighbour->address;
        p.neighbour_state = NeighbourStateName(f.neighbour->state);
        if (f.neighbour->mac) p.neighbour_mac = MacToString(*f.neighbour->mac);
      } else if (p.unknown.empty()) {
        p.unknown = f.neighbour_unknown;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace qpconnect::kernel
