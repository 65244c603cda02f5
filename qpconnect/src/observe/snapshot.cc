// SPDX-License-Identifier: MIT
#include "qpconnect/observe/snapshot.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>

#include "qpconnect/observe/cm_id.h"

namespace qpconnect {
namespace {

// States in which dest_qp_num has been set (RTR and later).
bool PastInit(const std::string& state) {
  return state == "RTR" || state == "RTS" || state == "SQD" || state == "SQE" || state == "ERR";
}

// A QP across samples: its device (by index among the snapshot's device
// names), number and owner.
struct QpKey {
  size_t device = 0;
  uint32_t lqpn = 0;
  int pid = 0;
  bool operator==(const QpKey&) const = default;
};

struct QpKeyHash {
  size_t operator()(const QpKey& k) const {
    return std::hash<uint64_t>()((uint64_t{k.lqpn} << 32) ^ static_cast<uint32_t>(k.pid)) ^
           (k.device * 0x9e3779b97f4a7c15ull);
  }
};

std::string PortKey(const std::string& device, uint8_t port) {
  return device + '/' + std::to_string(port);
}

}  // namespace

double SnapshotInterval(const Snapshot& snapshot) {
  if (snapshot.samples.size() < 2) return 0;
  return snapshot.samples.back().at_seconds - snapshot.samples.front().at_seconds;
}

double SnapshotSkewSeconds(const std::vector<Snapshot>& snapshots) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const Snapshot& s : snapshots) {
    if (s.started_epoch <= 0) continue;
    lo = any ? std::min(lo, s.started_epoch) : s.started_epoch;
    hi = any ? std::max(hi, s.started_epoch) : s.started_epoch;
    any = true;
  }
  return hi - lo;
}

void AddSnapshot(const Snapshot& snapshot, const std::string& origin, Observation* out) {
  out->hosts.push_back({snapshot.host, snapshot.job, snapshot.identity});
  const size_t first_qp = out->qps.size();
  std::unordered_map<QpKey, size_t, QpKeyHash> qp_at;  // -> index in out->qps
  qp_at.reserve(snapshot.samples.empty() ? 0 : snapshot.samples.front().qps.size() * 2);
  std::vector<const std::string*> devices;  // the device names seen, by index
  auto device_index = [&](const std::string& name) {
    for (size_t d = devices.size(); d-- > 0;) {
      if (*devices[d] == name) return d;
    }
    devices.push_back(&name);
    return devices.size() - 1;
  };
  size_t most = 0;
  for (const KernelSample& sample : snapshot.samples) most = std::max(most, sample.qps.size());
  if (out->qps.capacity() < out->qps.size() + most) {
    out->qps.reserve(std::max(out->qps.size() + most, out->qps.capacity() * 2));
  }
  // The GIDs of a port of this host (its identity), for cm_id destinations.
  auto own_gids = [&](const std::string& device, uint8_t port) -> std::span<const Gid> {
    for (const PortIdentity& p : snapshot.identity) {
      if (p.device == device && p.port == port) return p.gids;
    }
    return {};
  };
  const size_t last = snapshot.samples.empty() ? 0 : snapshot.samples.size() - 1;
  std::vector<bool> in_last;
  for (size_t s = 0; s < snapshot.samples.size(); ++s) {
    const KernelSample& sample = snapshot.samples[s];
    for (const KernelQp& k : sample.qps) {
      auto [it, inserted] =
          qp_at.try_emplace(QpKey{device_index(k.device), k.lqpn, k.pid}, out->qps.size());
      if (inserted) {
        ObservedQp& q = out->qps.emplace_back();
        q.source = ObservedSource::kSnapshot;
        q.origin = origin;
        q.host = snapshot.host;
        q.pid = k.pid;
        q.comm = k.comm;
        q.device = k.device;
        q.qpn = k.lqpn;
        q.samples.reserve(snapshot.samples.size());
        in_last.push_back(false);
      }
      ObservedQp& q = out->qps[it->second];
      q.port = k.port != 0 ? k.port : q.port;
      q.type_name = k.type;
      q.transport = TransportOfTypeName(k.type);
      q.state = k.state;
      q.dest_qpn.reset();
      const bool connected_type = q.transport == Transport::kRc || q.transport == Transport::kUc;
      if (connected_type && PastInit(k.state) && k.rqpn && *k.rqpn != 0) q.dest_qpn = *k.rqpn;
      q.dest_gid = k.dgid;
      q.dest_lid = k.dlid;
      if (!k.dgid && connected_type && !k.dst_addr.empty()) {
        q.dest_gid = DestinationGidOfCmId(k.src_addr, k.dst_addr, own_gids(k.device, q.port));
      }
      ObservedSample observed;
      observed.at_seconds = sample.at_seconds;
      observed.state = k.state;
      observed.sq_psn = k.sq_psn;
      observed.rq_psn = k.rq_psn;
      observed.process_state = k.process_state;
      q.samples.push_back(std::move(observed));
      if (s == last) in_last[it->second - first_qp] = true;
    }
  }
  for (size_t i = 0; i < in_last.size(); ++i) {
    if (!in_last[i]) out->qps[first_qp + i].destroyed = true;
  }
  for (const ObservedPath& p : snapshot.paths) {
    for (size_t d = 0; d < devices.size(); ++d) {
      if (*devices[d] != p.device) continue;
      if (auto it = qp_at.find(QpKey{d, p.lqpn, p.pid}); it != qp_at.end()) {
        out->qps[it->second].path = p;
      }
      break;
    }
  }

  const double interval = SnapshotInterval(snapshot);
  std::unordered_map<std::string, size_t> port_at;
  for (const KernelSample& sample : snapshot.samples) {
    for (const KernelPortCounters& k : sample.ports) {
      auto [it, inserted] = port_at.try_emplace(PortKey(k.device, k.port), out->ports.size());
      if (inserted) {
        ObservedPortCounters p;
        p.host = snapshot.host;
        p.device = k.device;
        p.port = k.port;
        p.interval_seconds = interval;
        for (const auto& [name, value] : k.counters) p.counters.push_back({name, {value, value}});
        out->ports.push_back(std::move(p));
        continue;
      }
      // A later sample: its values become the second of each pair.
      ObservedPortCounters& p = out->ports[it->second];
      for (const auto& [name, value] : k.counters) {
        bool found = false;
        for (auto& [known, values] : p.counters) {
          if (known == name) {
            values.second = value;
            found = true;
            break;
          }
        }
        if (!found) p.counters.push_back({name, {value, value}});
      }
    }
  }
}

}  // namespace qpconnect
