// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/describe.h"

#include <unistd.h>

#include <optional>
#include <random>

#include "qpconnect/verbs/device_query.h"
#include "qpconnect/verbs/netdev.h"

namespace qpconnect::verbs {
namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

}  // namespace

uint32_t RandomPsn() {
  std::random_device rd;
  return rd() & kPsnMask;
}

Result<LocalDescription> DescribeLocal(ibv_context& ctx, const DescribeOptions& o) {
  // Only what the description needs: the one port, and of its P_Key table
  // the entry at pkey_index (all of it when a P_Key value is to be found).
  PkeyScope pkeys;
  if (!o.pkey_value) pkeys.index = o.pkey_index;
  auto dev = QueryDeviceForPort(ctx, o.port, pkeys);
  if (!dev) return std::move(dev).error();
  // The host's addresses are read once, when GID selection first asks.
  std::optional<NetdevAddresses> addresses;
  return DescribeFromDevice(*dev, o, [&addresses](const GidEntry& g) {
    if (!addresses) addresses = NetdevAddresses::Snapshot();
    return addresses->Has(g.netdev, g.gid);
  });
}

Result<LocalDescription> DescribeFromDevice(
    const DeviceInfo& device, const DescribeOptions& o,
    const std::function<bool(const GidEntry&)>& configured) {
  if (o.flow_label > kFlowLabelMask) {
    return Error{ErrorCode::kInvalidArgument, 0, "open session", "flow_label",
                 "flow label " + std::to_string(o.flow_label) + " exceeds 20 bits"};
  }
  const DeviceInfo* dev = &device;
  const PortInfo* port = nullptr;
  for (const auto& p : dev->ports) {
    if (p.facts.port_num == o.port) port = &p;
  }
  if (port == nullptr) {
    return Error{ErrorCode::kNotFound, 0, "open session", "ib-port",
                 "device " + dev->name + " has no port " + std::to_string(o.port) + " (it has " +
                     std::to_string(dev->ports.size()) + ")"};
  }
  if (!port->facts.active) {
    return Error{ErrorCode::kNotFound, 0, "open session", "port_state",
                 dev->name + " port " + std::to_string(o.port) + " is " + port->state +
                     ", not ACTIVE (check the link / subnet manager)"};
  }

  // GID: required on Ethernet; on InfiniBand used when a GRH is needed.
  std::optional<GidEntry> sgid;
  auto gid = SelectGid(port->gids, port->facts.link_layer, o.gid, configured);
  if (gid) {
    sgid = *gid;
  } else if (port->facts.link_layer == LinkLayer::kEthernet || o.gid.index) {
    Error e = std::move(gid).error();
    e.detail = dev->name + " port " + std::to_string(o.port) + ": " + e.detail;
    return e;
  }

  // P_Key: the value at pkey_index, or the index of a requested value.
  uint16_t pkey_index = o.pkey_index;
  std::optional<uint16_t> pkey;
  for (const auto& k : port->pkeys) {
    if (o.pkey_value) {
      if ((k.pkey & kPkeyPartitionMask) == (*o.pkey_value & kPkeyPartitionMask)) {
        pkey_index = k.index;
        pkey = k.pkey;
        break;
      }
    } else if (k.index == pkey_index) {
      pkey = k.pkey;
    }
  }
  if (!pkey) {
    return Error{ErrorCode::kNotFound, 0, "open session", "pkey_index",
                 o.pkey_value
                     ? "P_Key value not in the port's P_Key table"
                     : "P_Key index " + std::to_string(pkey_index) + " has no valid P_Key"};
  }

  LocalDescription d;
  d.limits = dev->limits;
  EndpointInfo& l = d.endpoint;
  l.transport = o.transport;
  l.identity = {o.host.empty() ? HostName() : o.host, dev->name, dev->node_guid};
  l.port = port->facts;
  l.path.path_mtu = o.mtu.value_or(port->facts.active_mtu);
  l.path.path_mtu_forced = o.mtu.has_value();
  l.path.use_grh = port->facts.link_layer == LinkLayer::kEthernet || port->facts.grh_required;
  l.path.sgid = sgid;
  // Pinned: kept by the joint GID choice (gid_pair.h); otherwise a connector
  // that applies the joint choice publishes kJoint (connector.cc).
  l.path.gid_choice = o.gid.index && sgid ? GidChoice::kPinned : GidChoice::kOwn;
  l.path.sl = o.sl;
  l.path.traffic_class = o.traffic_class;
  l.path.flow_label = o.flow_label;
  l.path.hop_limit = port->facts.link_layer == LinkLayer::kEthernet ? 64 : 1;
  l.keys.pkey = *pkey;
  l.keys.pkey_index = pkey_index;
  l.keys.qkey = o.qkey;
  l.rd_atomic.max_rd_atomic = o.max_rd_atomic;
  l.rd_atomic.max_dest_rd_atomic = o.max_dest_rd_atomic;
  l.rd_atomic.device_max_qp_rd_atom = dev->limits.max_qp_rd_atom;
  l.rd_atomic.device_max_qp_init_rd_atom = dev->limits.max_qp_init_rd_atom;
  l.gid_table = port->gids;
  return d;
}

void AddQps(EndpointInfo& endpoint, const std::vector<uint32_t>& qpns, uint32_t first_psn,
            const std::vector<std::optional<MrDescriptor>>& mrs) {
  endpoint.qps.reserve(endpoint.qps.size() + qpns.size());
  for (size_t i = 0; i < qpns.size(); ++i) {
    QpEntry q;
    q.qpn = qpns[i];
    q.psn = (first_psn + static_cast<uint32_t>(i)) & kPsnMask;
    if (i < mrs.size()) q.mr = mrs[i];
    endpoint.qps.push_back(q);
  }
}

}  // namespace qpconnect::verbs
