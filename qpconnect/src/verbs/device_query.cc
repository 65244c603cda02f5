// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/device_query.h"

#include <infiniband/umad.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::verbs {
namespace {

GidEntry ToGidEntry(const ibv_gid_entry& e) {
  GidEntry g;
  g.index = static_cast<uint16_t>(e.gid_index);
  std::memcpy(g.gid.data(), e.gid.raw, g.gid.size());
  g.type = ToGidType(e.gid_type);
  g.family = FamilyOfGid(g.gid, g.type);
  if (e.ndev_ifindex != 0) {
    char name[IF_NAMESIZE] = {};
    if (if_indextoname(e.ndev_ifindex, name) != nullptr) g.netdev = name;
  }
  return g;
}

const char* AtomicCapName(ibv_atomic_cap cap) {
  switch (cap) {
    case IBV_ATOMIC_NONE:
      return "none";
    case IBV_ATOMIC_HCA:
      return "hca";
    case IBV_ATOMIC_GLOB:
      return "global";
  }
  return "unknown";
}

// P_Keys through libibumad (sysfs, host byte order) where it serves: the
// InfiniBand ports an SM manages. Returns false when umad cannot read the port.
bool PkeysFromUmad(const char* ca_name, uint8_t port_num, std::vector<PkeyEntry>& out) {
  umad_port_t port{};
  if (umad_get_port(ca_name, port_num, &port) != 0) return false;
  for (unsigned i = 0; i < port.pkeys_size; ++i) {
    if (port.pkeys[i] != 0) out.push_back({static_cast<uint16_t>(i), port.pkeys[i]});
  }
  umad_release_port(&port);
  return true;
}

Result<std::vector<PkeyEntry>> QueryPkeys(ibv_context& ctx, uint8_t port_num, uint16_t len,
                                          LinkLayer link_layer) {
  std::vector<PkeyEntry> pkeys;
  if (link_layer == LinkLayer::kInfiniBand &&
      PkeysFromUmad(ibv_get_device_name(ctx.device), port_num, pkeys)) {
    return pkeys;
  }
  for (uint16_t i = 0; i < len; ++i) {
    __be16 pkey = 0;
    if (int rc = ibv_query_pkey(&ctx, port_num, i, &pkey); rc != 0) {
      return VerbsError(
          "ibv_query_pkey port " + std::to_string(port_num) + " index " + std::to_string(i), rc);
    }
    uint16_t host = be16toh(pkey);
    if (host != 0) pkeys.push_back({i, host});
  }
  return pkeys;
}

}  // namespace

const char* PortStateName(int state) {
  switch (state) {
    case IBV_PORT_NOP:
      return "NOP";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
    default:
      return "UNKNOWN";
  }
}

const char* PhysStateName(int phys_state) {
  switch (phys_state) {
    case 1:
      return "SLEEP";
    case 2:
      return "POLLING";
    case 3:
      return "DISABLED";
    case 4:
      return "PORT_CONFIGURATION_TRAINING";
    case 5:
      return "LINK_UP";
    case 6:
      return "LINK_ERROR_RECOVERY";
    case 7:
      return "PHY_TEST";
    default:
      return "UNKNOWN";
  }
}

LinkLayer ToLinkLayer(uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return LinkLayer::kInfiniBand;
    case IBV_LINK_LAYER_ETHERNET:
      return LinkLayer::kEthernet;
    default:
      // IBV_LINK_LAYER_UNSPECIFIED: by convention an InfiniBand port.
      return LinkLayer::kInfiniBand;
  }
}

GidType ToGidType(uint32_t gid_type) {
  switch (gid_type) {
    case IBV_GID_TYPE_IB:
      return GidType::kIb;
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    case IBV_GID_TYPE_ROCE_V2:
      return GidType::kRoceV2;
    default:
      return GidType::kUnspecified;
  }
}

Mtu ToMtu(int ibv_mtu) {
  auto m = static_cast<Mtu>(ibv_mtu);
  return IsValidMtu(m) ? m : Mtu::kInvalid;
}

std::string ActiveSpeedName(uint8_t active_speed) {
  switch (active_speed) {
    case 1:
      return "2.5 Gb/s";
    case 2:
      return "5 Gb/s";
    case 4:
    case 8:
      return "10 Gb/s";
    case 16:
      return "14 Gb/s";
    case 32:
      return "25 Gb/s";
    case 64:
      return "50 Gb/s";
    case 128:
      return "100 Gb/s";
    default:
      return "";
  }
}

uint8_t ActiveWidthLanes(uint8_t active_width) {
  switch (active_width) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

namespace {

// The capacity ibv_query_gid_table() needs: every port's table, or the call
// fails with EINVAL.
size_t GidTableCapacity(ibv_context& ctx, uint8_t phys_port_cnt) {
  size_t capacity = 0;
  for (uint8_t p = 1; p <= phys_port_cnt; ++p) {
    ibv_port_attr pa{};
    if (ibv_query_port(&ctx, p, &pa) == 0) capacity += static_cast<size_t>(pa.gid_tbl_len);
  }
  return capacity;
}

// QueryGids with the whole device's table capacity known.
Result<std::vector<GidEntry>> QueryGidsWithin(ibv_context& ctx, uint8_t port_num,
                                              uint32_t gid_tbl_len, size_t capacity) {
  std::vector<GidEntry> gids;
  // One call for the whole device (all ports), filtered to this port.
  std::vector<ibv_gid_entry> entries(std::max<size_t>(capacity, 1));
  ssize_t n = ibv_query_gid_table(&ctx, entries.data(), entries.size(), 0);
  if (n >= 0) {
    for (ssize_t i = 0; i < n; ++i) {
      const auto& e = entries[static_cast<size_t>(i)];
      if (e.port_num == port_num) gids.push_back(ToGidEntry(e));
    }
    std::sort(gids.begin(), gids.end(),
              [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
    return gids;
  }
  // Fallback: per-index query; ENODATA marks an empty entry.
  for (uint32_t i = 0; i < gid_tbl_len; ++i) {
    ibv_gid_entry e{};
    int rc = ibv_query_gid_ex(&ctx, port_num, i, &e, 0);
    if (rc == ENODATA) continue;
    if (rc != 0) {
      return VerbsError(
          "ibv_query_gid_ex port " + std::to_string(port_num) + " index " + std::to_string(i), rc);
    }
    GidEntry g = ToGidEntry(e);
    if (!IsZeroGid(g.gid)) gids.push_back(std::move(g));
  }
  return gids;
}

// The entry at `index` of the P_Key table (one sysfs read): none when the
// index is past the table or the entry is empty.
Result<std::vector<PkeyEntry>> QueryPkeyAt(ibv_context& ctx, uint8_t port_num, uint16_t len,
                                           uint16_t index) {
  std::vector<PkeyEntry> pkeys;
  if (index >= len) return pkeys;
  __be16 pkey = 0;
  if (int rc = ibv_query_pkey(&ctx, port_num, index, &pkey); rc != 0) {
    return VerbsError(
        "ibv_query_pkey port " + std::to_string(port_num) + " index " + std::to_string(index), rc);
  }
  if (uint16_t host = be16toh(pkey); host != 0) pkeys.push_back({index, host});
  return pkeys;
}

// One port given its attributes, the device's GID capacity and the P_Keys
// to read.
Result<PortInfo> QueryPortWithin(ibv_context& ctx, uint8_t port_num, const ibv_port_attr& pa,
                                 size_t gid_capacity, const PkeyScope& scope) {
  PortInfo p;
  p.facts.port_num = port_num;
  p.facts.link_layer = ToLinkLayer(pa.link_layer);
  p.facts.active = pa.state == IBV_PORT_ACTIVE;
  p.facts.lid = pa.lid;
  p.facts.lmc = pa.lmc;
  p.facts.sm_lid = pa.sm_lid;
  p.facts.active_mtu = ToMtu(pa.active_mtu);
  p.facts.max_mtu = ToMtu(pa.max_mtu);
  p.facts.grh_required = (pa.flags & IBV_QPF_GRH_REQUIRED) != 0;
  p.state = PortStateName(pa.state);
  p.phys_state = PhysStateName(pa.phys_state);
  p.sm_sl = pa.sm_sl;
  p.max_msg_sz = pa.max_msg_sz;
  p.gid_tbl_len = static_cast<uint32_t>(pa.gid_tbl_len);
  p.pkey_tbl_len = pa.pkey_tbl_len;
  p.active_speed = ActiveSpeedName(pa.active_speed);
  p.active_width = ActiveWidthLanes(pa.active_width);

  auto gids = QueryGidsWithin(ctx, port_num, p.gid_tbl_len, gid_capacity);
  if (!gids) return std::move(gids).error();
  p.gids = std::move(*gids);
  for (const auto& g : p.gids) {
    if (g.index == 0) p.facts.subnet_prefix = GidSubnetPrefix(g.gid);
    if (p.netdev.empty()) p.netdev = g.netdev;  // GIDs in index order: the first named
  }
  auto pkeys = scope.index ? QueryPkeyAt(ctx, port_num, p.pkey_tbl_len, *scope.index)
                           : QueryPkeys(ctx, port_num, p.pkey_tbl_len, p.facts.link_layer);
  if (!pkeys) return std::move(pkeys).error();
  p.pkeys = std::move(*pkeys);
  return p;
}

Result<ibv_port_attr> QueryPortAttr(ibv_context& ctx, uint8_t port_num) {
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(&ctx, port_num, &pa); rc != 0) {
    return VerbsError("ibv_query_port " + std::to_string(port_num), rc);
  }
  return pa;
}

// The device's attributes and limits, no ports.
DeviceInfo DeviceFromAttr(ibv_context& ctx, const ibv_device_attr& a) {
  DeviceInfo d;
  d.name = ibv_get_device_name(ctx.device);
  d.node_type = ibv_node_type_str(ctx.device->node_type);
  d.transport = ctx.device->transport_type == IBV_TRANSPORT_IWARP ? "iwarp" : "infiniband";
  d.node_guid = be64toh(a.node_guid);
  d.sys_image_guid = be64toh(a.sys_image_guid);
  d.fw_ver = a.fw_ver;
  d.vendor_id = a.vendor_id;
  d.vendor_part_id = a.vendor_part_id;
  d.hw_ver = a.hw_ver;
  auto& l = d.limits;
  l.max_qp = static_cast<uint32_t>(a.max_qp);
  l.max_qp_wr = static_cast<uint32_t>(a.max_qp_wr);
  l.max_sge = static_cast<uint32_t>(a.max_sge);
  l.max_cq = static_cast<uint32_t>(a.max_cq);
  l.max_cqe = static_cast<uint32_t>(a.max_cqe);
  l.max_mr = static_cast<uint32_t>(a.max_mr);
  l.max_mr_size = a.max_mr_size;
  l.max_pd = static_cast<uint32_t>(a.max_pd);
  l.max_ah = static_cast<uint32_t>(a.max_ah);
  l.max_qp_rd_atom = static_cast<uint32_t>(a.max_qp_rd_atom);
  l.max_qp_init_rd_atom = static_cast<uint32_t>(a.max_qp_init_rd_atom);
  l.max_res_rd_atom = static_cast<uint32_t>(a.max_res_rd_atom);
  l.max_srq = static_cast<uint32_t>(a.max_srq);
  l.max_pkeys = a.max_pkeys;
  l.atomic_cap = AtomicCapName(a.atomic_cap);
  return d;
}

}  // namespace

Result<std::optional<GidEntry>> QueryGidAt(ibv_context& ctx, uint8_t port_num, uint16_t index) {
  ibv_gid_entry e{};
  int rc = ibv_query_gid_ex(&ctx, port_num, index, &e, 0);
  if (rc == ENODATA) return std::optional<GidEntry>();
  if (rc != 0) {
    return VerbsError(
        "ibv_query_gid_ex port " + std::to_string(port_num) + " index " + std::to_string(index),
        rc);
  }
  GidEntry g = ToGidEntry(e);
  if (IsZeroGid(g.gid)) return std::optional<GidEntry>();
  return std::optional<GidEntry>(std::move(g));
}

Result<std::vector<GidEntry>> QueryGids(ibv_context& ctx, uint8_t port_num, uint32_t gid_tbl_len) {
  ibv_device_attr dattr{};
  if (int rc = ibv_query_device(&ctx, &dattr); rc != 0) return VerbsError("ibv_query_device", rc);
  return QueryGidsWithin(ctx, port_num, gid_tbl_len, GidTableCapacity(ctx, dattr.phys_port_cnt));
}

Result<PortInfo> QueryPort(ibv_context& ctx, uint8_t port_num) {
  ibv_device_attr dattr{};
  if (int rc = ibv_query_device(&ctx, &dattr); rc != 0) return VerbsError("ibv_query_device", rc);
  auto pa = QueryPortAttr(ctx, port_num);
  if (!pa) return std::move(pa).error();
  return QueryPortWithin(ctx, port_num, *pa, GidTableCapacity(ctx, dattr.phys_port_cnt), {});
}

Result<DeviceInfo> QueryDevice(ibv_context& ctx) {
  ibv_device_attr a{};
  if (int rc = ibv_query_device(&ctx, &a); rc != 0) return VerbsError("ibv_query_device", rc);
  DeviceInfo d = DeviceFromAttr(ctx, a);
  std::vector<ibv_port_attr> attrs;
  size_t gid_capacity = 0;
  for (uint8_t port = 1; port <= a.phys_port_cnt; ++port) {
    auto pa = QueryPortAttr(ctx, port);
    if (!pa) return std::move(pa).error();
    gid_capacity += static_cast<size_t>(pa->gid_tbl_len);
    attrs.push_back(*pa);
  }
  for (uint8_t port = 1; port <= a.phys_port_cnt; ++port) {
    auto p = QueryPortWithin(ctx, port, attrs[port - 1], gid_capacity, {});
    if (!p) return std::move(p).error();
    d.ports.push_back(std::move(*p));
  }
  return d;
}

Result<DeviceInfo> QueryDeviceForPort(ibv_context& ctx, uint8_t port_num, PkeyScope pkeys) {
  ibv_device_attr a{};
  if (int rc = ibv_query_device(&ctx, &a); rc != 0) return VerbsError("ibv_query_device", rc);
  DeviceInfo d = DeviceFromAttr(ctx, a);
  if (port_num == 0 || port_num > a.phys_port_cnt) {
    return Error{ErrorCode::kNotFound, 0, "open session", "ib-port",
                 "device " + d.name + " has no port " + std::to_string(port_num) + " (it has " +
                     std::to_string(a.phys_port_cnt) + ")"};
  }
  ibv_port_attr want{};
  size_t gid_capacity = 0;
  for (uint8_t port = 1; port <= a.phys_port_cnt; ++port) {
    auto pa = QueryPortAttr(ctx, port);
    if (!pa) return std::move(pa).error();
    gid_capacity += static_cast<size_t>(pa->gid_tbl_len);
    if (port == port_num) want = *pa;
  }
  auto p = QueryPortWithin(ctx, port_num, want, gid_capacity, pkeys);
  if (!p) return std::move(p).error();
  d.ports.push_back(std::move(*p));
  return d;
}

}  // namespace qpconnect::verbs
