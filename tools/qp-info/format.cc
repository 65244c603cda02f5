// SPDX-License-Identifier: MIT
#include "format.h"

#include <cstdio>
#include <sstream>

#include "hex_text.h"
#include "json_document.h"

namespace qpconnect::tools {
namespace {

std::string MtuText(Mtu m) {
  int b = MtuBytes(m);
  return b == 0 ? "?" : std::to_string(b);
}

nlohmann::json LimitsToJson(const DeviceLimits& l) {
  return {{"max_qp", l.max_qp},
          {"max_qp_wr", l.max_qp_wr},
          {"max_sge", l.max_sge},
          {"max_cq", l.max_cq},
          {"max_cqe", l.max_cqe},
          {"max_mr", l.max_mr},
          {"max_mr_size", l.max_mr_size},
          {"max_pd", l.max_pd},
          {"max_ah", l.max_ah},
          {"max_qp_rd_atom", l.max_qp_rd_atom},
          {"max_qp_init_rd_atom", l.max_qp_init_rd_atom},
          {"max_res_rd_atom", l.max_res_rd_atom},
          {"max_srq", l.max_srq},
          {"max_pkeys", l.max_pkeys},
          {"atomic_cap", l.atomic_cap}};
}

nlohmann::json PortToJson(const PortInfo& p) {
  nlohmann::json gids = nlohmann::json::array();
  for (const auto& g : p.gids) {
    gids.push_back({{"index", g.index},
                    {"gid", GidToString(g.gid)},
                    {"type", GidTypeName(g.type)},
                    {"family", GidFamilyName(g.family)},
                    {"netdev", g.netdev}});
  }
  nlohmann::json pkeys = nlohmann::json::array();
  for (const auto& k : p.pkeys) {
    pkeys.push_back({{"index", k.index},
                     {"pkey", Hex(k.pkey, 4)},
                     {"membership", k.full_member() ? "full" : "limited"}});
  }
  const PortFacts& f = p.facts;
  return {{"port", f.port_num},
          {"state", p.state},
          {"phys_state", p.phys_state},
          {"link_layer", LinkLayerName(f.link_layer)},
          {"lid", f.lid},
          {"lmc", f.lmc},
          {"sm_lid", f.sm_lid},
          {"sm_sl", p.sm_sl},
          {"subnet_prefix", GuidToString(f.subnet_prefix)},
          {"active_mtu", MtuBytes(f.active_mtu)},
          {"max_mtu", MtuBytes(f.max_mtu)},
          {"grh_required", f.grh_required},
          {"max_msg_sz", p.max_msg_sz},
          {"netdev", p.netdev},
          {"active_speed", p.active_speed},
          {"active_width", p.active_width},
          {"gid_tbl_len", p.gid_tbl_len},
          {"pkey_tbl_len", p.pkey_tbl_len},
          {"gids", gids},
          {"pkeys", pkeys}};
}

}  // namespace

nlohmann::ordered_json DevicesToJson(const std::vector<DeviceInfo>& devices) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& d : devices) {
    nlohmann::json ports = nlohmann::json::array();
    for (const auto& p : d.ports) ports.push_back(PortToJson(p));
    arr.push_back({{"name", d.name},
                   {"node_type", d.node_type},
                   {"transport_type", d.transport},
                   {"node_guid", GuidToString(d.node_guid)},
                   {"sys_image_guid", GuidToString(d.sys_image_guid)},
                   {"fw_ver", d.fw_ver},
                   {"vendor_id", Hex(d.vendor_id, 4)},
                   {"vendor_part_id", d.vendor_part_id},
                   {"hw_ver", Hex(d.hw_ver, 1)},
                   {"limits", LimitsToJson(d.limits)},
                   {"ports", ports}});
  }
  nlohmann::ordered_json doc = JsonDocument();
  doc["devices"] = std::move(arr);
  return doc;
}

std::string FormatDevicesText(const std::vector<DeviceInfo>& devices) {
  std::ostringstream o;
  for (const auto& d : devices) {
    const DeviceLimits& l = d.limits;
    o << d.name << "  node_guid " << GuidToString(d.node_guid) << "  fw " << d.fw_ver << "  vendor "
      << Hex(d.vendor_id, 4) << "/" << d.vendor_part_id << "  (" << d.node_type << ")\n";
    o << "  limits: max_qp_rd_atom " << l.max_qp_rd_atom << "  max_qp_init_rd_atom "
      << l.max_qp_init_rd_atom << "  max_qp_wr " << l.max_qp_wr << "  max_sge " << l.max_sge
      << "  max_qp " << l.max_qp << "  max_cqe " << l.max_cqe << "  atomics " << l.atomic_cap
      << "\n";
    for (const auto& p : d.ports) {
      const PortFacts& f = p.facts;
      o << "  port " << unsigned{f.port_num} << ": " << p.state << " (" << p.phys_state
        << ")  link " << LinkLayerName(f.link_layer) << "  mtu active " << MtuText(f.active_mtu)
        << " max " << MtuText(f.max_mtu);
      if (f.link_layer == LinkLayer::kInfiniBand) {
        o << "  lid " << f.lid << " lmc " << unsigned{f.lmc} << " sm_lid " << f.sm_lid;
      }
      if (!p.netdev.empty()) o << "  netdev " << p.netdev;
      if (!p.active_speed.empty()) {
        o << "  " << unsigned{p.active_width} << "x " << p.active_speed;
      }
      if (f.grh_required) o << "  grh-required";
      o << "\n";
      o << "    GIDs (" << p.gids.size() << " valid of " << p.gid_tbl_len << "):\n";
      if (!p.gids.empty()) {
        o << "      idx  type     family  netdev           gid\n";
        for (const auto& g : p.gids) {
          char line[160];
          std::snprintf(line, sizeof line, "      %-4u %-8s %-7s %-16s %s\n", unsigned{g.index},
                        GidTypeName(g.type), GidFamilyName(g.family),
                        g.netdev.empty() ? "-" : g.netdev.c_str(), GidToString(g.gid).c_str());
          o << line;
        }
      }
      o << "    P_Keys (" << p.pkeys.size() << " of " << p.pkey_tbl_len << "):";
      for (const auto& k : p.pkeys) {
        o << "  [" << k.index << "] " << Hex(k.pkey, 4) << (k.full_member() ? " full" : " limited");
      }
      o << "\n";
    }
  }
  return o.str();
}

}  // namespace qpconnect::tools
