// SPDX-License-Identifier: MIT
// The RoCE paths of connected QPs, for a snapshot (issue 31 item 5): for each
// RC/UC QP past INIT of a sample, its source and destination addresses and
// the kernel's route and neighbour facts between them (ObservedPath,
// observed.h), so that qp-validate's live judge names a job hung on a stale
// or failed neighbour, a removed address or a missing route
// (roce-path-broken), as qp-connect names them before RTR.
//
// The kernel's resource tracker shows no GID of a QP. The source is the QP's
// port's routable RoCE v2 GID (IPv4 first, not link-local), the destination
// the same of the port of the QP its rqpn names, when that QP is in the same
// sample and names it back; otherwise the path says why it is unknown. GIDs
// come from sysfs (/sys/class/infiniband/DEV/ports/N/gids, gid_attrs); the
// route, neighbour and netdev facts from rtnetlink through
// qpconnect/verbs/kernel_path.h, the reader qp-connect uses before RTR.
//
// Thread-safety: as the sources.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/observe/observed.h"
#include "qpconnect/observe/snapshot.h"
#include "qpconnect/roce_path.h"

namespace qpconnect::kernel {

// What ReadQpPaths() reads through; tests inject their own.
struct PathSources {
  // A port's valid GID entries (with their netdevs); empty when unreadable.
  std::function<std::vector<GidEntry>(const std::string& device, uint8_t port)> gids;
  // The kernel's facts on a path (verbs::ReadKernelPath).
  std::function<RocePathFacts(const RocePathQuery& query)> path;
  // A netdev's MAC and more (verbs::ReadNetdev); nullopt when unreadable.
  std::function<std::optional<NetdevInfo>(const std::string& name)> netdev;
};

// The sysfs GID reader, rtnetlink path and netdev readers.
PathSources KernelPathSources();

// The port's GID table from SYSFS_ROOT/class/infiniband/DEV/ports/N:
// non-zero entries of gids/I with gid_attrs/types/I and gid_attrs/ndevs/I.
std::vector<GidEntry> ReadSysfsGids(const std::string& device, uint8_t port,
                                    const std::string& sysfs_root = "/sys");

// The routable RoCE v2 entry a QP on such a port sends from: IPv4-mapped
// first, then IPv6, never link-local; nullopt when there is none.
std::optional<GidEntry> RoutableGid(const std::vector<GidEntry>& gids);

// One ObservedPath per RC/UC QP of `sample` past INIT with an rqpn, on a
// port with GIDs that are RoCE (a port whose table holds no RoCE entry,
// e.g. InfiniBand, gives none).
std::vector<ObservedPath> ReadQpPaths(const KernelSample& sample, const PathSources& sources);

}  // namespace qpconnect::kernel
