// SPDX-License-Identifier: MIT
// Endpoint pairs for the validator tests: clean baselines (InfiniBand and
// RoCE, any transport) that produce no error or warning, and helpers to run
// Validate() and look at the ids it reports.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/roce_path.h"
#include "qpconnect/validate.h"

namespace qpconnect::test {

inline Gid G(const char* text) {
  std::optional<Gid> g = GidFromString(text);
  return g.value_or(Gid{});
}

inline GidEntry Entry(uint16_t index, const char* gid, GidType type) {
  GidEntry e;
  e.index = index;
  e.gid = G(gid);
  e.type = type;
  e.family = FamilyOfGid(e.gid, type);
  return e;
}

// Side 0 or 1 of a clean pair on an InfiniBand fabric: LIDs 1 and 2, LMC 0,
// active MTU 4096, default P_Key, Q_Key 0x11111111, no GRH.
inline EndpointInfo IbEndpoint(Transport t, int side, size_t qps = 1) {
  EndpointInfo e;
  e.transport = t;
  e.identity.host = side == 0 ? "host-a" : "host-b";
  e.identity.device = "mlx5_0";
  e.port.port_num = 1;
  e.port.link_layer = LinkLayer::kInfiniBand;
  e.port.active = true;
  e.port.lid = side == 0 ? 1 : 2;
  e.port.sm_lid = 1;
  e.port.subnet_prefix = 0xfe80000000000000ULL;
  e.port.active_mtu = Mtu::k4096;
  e.port.max_mtu = Mtu::k4096;
  e.path.path_mtu = Mtu::k4096;
  e.gid_table = {Entry(0, side == 0 ? "fe80::a" : "fe80::b", GidType::kIb)};
  e.path.sgid = e.gid_table[0];
  e.keys.qkey = 0x11111111;
  e.rd_atomic.device_max_qp_rd_atom = 16;
  e.rd_atomic.device_max_qp_init_rd_atom = 16;
  for (size_t i = 0; i < qps; ++i) {
    const uint32_t base = side == 0 ? 0x100 : 0x200;
    e.qps.push_back({base + static_cast<uint32_t>(i), (base << 4) + static_cast<uint32_t>(i), {}});
  }
  return e;
}

// Side 0 or 1 of a clean RoCE pair on one L2 segment: each GID table holds a
// link-local and an IPv4-mapped GID, each as RoCE v1 and v2 (indices 0..3);
// both send from index 3 (RoCE v2, ::ffff:10.0.0.1 / .2). Active MTU 1024.
inline EndpointInfo RoceEndpoint(Transport t, int side, size_t qps = 1) {
  EndpointInfo e = IbEndpoint(t, side, qps);
  e.port.link_layer = LinkLayer::kEthernet;
  e.port.lid = 0;
  e.port.sm_lid = 0;
  e.port.active_mtu = Mtu::k1024;
  e.port.max_mtu = Mtu::k4096;
  e.path.path_mtu = Mtu::k1024;
  e.path.use_grh = true;
  const char* ll = side == 0 ? "fe80::a" : "fe80::b";
  const char* v4 = side == 0 ? "::ffff:10.0.0.1" : "::ffff:10.0.0.2";
  e.gid_table = {Entry(0, ll, GidType::kRoceV1), Entry(1, ll, GidType::kRoceV2),
                 Entry(2, v4, GidType::kRoceV1), Entry(3, v4, GidType::kRoceV2)};
  e.path.sgid = e.gid_table[3];
  return e;
}

// A pair under test. Plans are optional: absent ones are derived by Validate().
struct Pair {
  EndpointInfo local;
  EndpointInfo remote;
  std::optional<ConnectionPlan> local_plan;
  std::optional<ConnectionPlan> remote_plan;
  std::optional<PathRecord> sa_path;  // the SA's path local -> remote (rules_sa.cc)
  // The kernel's facts on the local RoCE path (rules_path.cc).
  std::optional<RocePathFacts> roce_path;

  // Fills both plans with PlanConnection() of the current endpoints (1 KiB
  // messages, which fit every MTU here), so a test can then change an attribute
  // as if a program had applied it.
  Pair& WithPlans() {
    PlanOptions options;
    options.message_size = 1024;
    local_plan = PlanConnection(local, remote, options);
    remote_plan = PlanConnection(remote, local, options);
    return *this;
  }

  std::vector<Finding> Run(const ValidateOptions& options = {}) const {
    ValidationInput in;
    in.local = &local;
    in.remote = &remote;
    in.local_plan = local_plan;
    in.remote_plan = remote_plan;
    if (sa_path) return Validate(in, *sa_path, options);
    return roce_path ? Validate(in, *roce_path, options) : Validate(in, options);
  }
};

inline Pair IbPair(Transport t, size_t qps = 1) {
  return {IbEndpoint(t, 0, qps), IbEndpoint(t, 1, qps), {}, {}, {}, {}};
}
inline Pair RocePair(Transport t, size_t qps = 1) {
  return {RoceEndpoint(t, 0, qps), RoceEndpoint(t, 1, qps), {}, {}, {}, {}};
}

// A RocePair on netdevs eth0 (local) and eth1 (remote), each side
// publishing its netdev (MAC 02:00:00:00:00:0a / :0b, untagged, MTU 1500),
// with the local kernel's facts of a healthy path: a route through eth0 in
// the main table, on link, and a REACHABLE neighbour holding the peer's MAC.
// rules_path.cc raise nothing on it.
inline Pair RocePairWithPath(Transport t, size_t qps = 1) {
  Pair p = RocePair(t, qps);
  const MacAddress mac[2] = {{0x02, 0, 0, 0, 0, 0x0a}, {0x02, 0, 0, 0, 0, 0x0b}};
  EndpointInfo* sides[2] = {&p.local, &p.remote};
  for (int i = 0; i < 2; ++i) {
    const std::string name = i == 0 ? "eth0" : "eth1";
    for (GidEntry& e : sides[i]->gid_table) e.netdev = name;
    sides[i]->path.sgid->netdev = name;
    sides[i]->netdevs = {{name, mac[i], 0, 1500}};
  }
  RocePathFacts f;
  f.query = {*p.local.path.sgid, p.remote.path.sgid->gid};
  f.netdev = p.local.netdevs[0];
  f.route = RouteFact{"eth0", "", "unicast", 254, 0};
  f.neighbour = NeighbourFact{"10.0.0.2", "eth0", NeighbourState::kReachable, mac[1]};
  p.roce_path = f;
  return p;
}

// Ids of the findings that are errors or warnings (what a user must act on).
inline std::set<std::string> Problems(const std::vector<Finding>& findings) {
  std::set<std::string> ids;
  for (const Finding& f : findings) {
    if (f.severity != Severity::kInfo) ids.insert(f.id);
  }
  return ids;
}

inline bool HasId(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings) {
    if (f.id == id && f.severity != Severity::kInfo) return true;
  }
  return false;
}

inline const Finding* FindId(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// A pointer into a temporary would dangle.
const Finding* FindId(const std::vector<Finding>&& findings, const std::string& id) = delete;

// All findings, one per line, for failure messages.
inline std::string Dump(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += FindingToString(f) + "\n";
  return out;
}

}  // namespace qpconnect::test
