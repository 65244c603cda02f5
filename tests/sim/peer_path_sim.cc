// SPDX-License-Identifier: MIT
// `sim` helper: the connector's path source (ConnectorOptions::path_source =
// sa::ResolvePeerPath, what `qp-connect --path sa` uses) against a real SA.
// Attached to an ibsim HCA (LD_PRELOAD=libumad2sim.so, SIM_HOST), it
// describes this port as the connector would (device, port, LID, subnet
// prefix, P_Key), a peer at DLID with the same prefix, both active at 4096,
// asks the SA for the path between the two descriptions and plans with it:
//   peer-path dlid=<n> sl=<n> path_mtu=<bytes> timeout=<n> static_rate=<code>
//             from_sa=<names>
// or, when the query is refused, "error: <attribute>" and the message.
//   peer_path_sim DLID [PKEY]
// Exit 0 planned, 1 refused, 2 usage or no port.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "qpconnect/plan.h"
#include "qpconnect/sa/peer_path.h"
#include "qpconnect/sa/umad_channel.h"

int main(int argc, char** argv) {
  using namespace qpconnect;
  if (argc < 2) {
    std::fprintf(stderr, "usage: peer_path_sim DLID [PKEY]\n");
    return 2;
  }
  auto port = sa::QueryUmadPort("", 0);
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().ToString().c_str());
    return 2;
  }
  uint64_t prefix = 0;
  for (int i = 0; i < 8; ++i) prefix = prefix << 8 | port->gid[static_cast<size_t>(i)];
  EndpointInfo local;
  local.transport = Transport::kRc;
  local.identity = {"sim", port->ca_name, 0};
  local.port.port_num = port->port_num;
  local.port.link_layer = LinkLayer::kInfiniBand;
  local.port.active = true;
  local.port.lid = port->lid;
  local.port.sm_lid = port->sm_lid;
  local.port.subnet_prefix = prefix;
  local.port.active_mtu = Mtu::k4096;
  local.path.path_mtu = Mtu::k4096;
  local.keys.pkey = argc > 2 ? static_cast<uint16_t>(std::strtoul(argv[2], nullptr, 0)) : 0xffff;
  local.qps.push_back({0x100, 0x1000, std::nullopt});
  EndpointInfo remote = local;
  remote.identity = {"peer", "peer_ca", 0};
  remote.port.lid = static_cast<uint16_t>(std::strtoul(argv[1], nullptr, 0));
  remote.qps.front().qpn = 0x200;

  auto path = sa::ResolvePeerPath(local, remote);
  if (!path) {
    std::printf("error: %s\n%s\n", path.error().attribute.c_str(), path.error().ToString().c_str());
    return 1;
  }
  PlanOptions options;
  options.sa_path = *path;
  const ConnectionPlan plan = PlanConnection(local, remote, options);
  const QpAttrs& q = plan.qps.at(0);
  std::string from;
  for (const auto& name : plan.from_sa) from += (from.empty() ? "" : ",") + name;
  std::printf("peer-path dlid=%u sl=%u path_mtu=%d timeout=%u static_rate=%u from_sa=%s\n",
              unsigned{q.ah.dlid}, unsigned{q.ah.sl}, MtuBytes(q.path_mtu), unsigned{q.timeout},
              unsigned{q.ah.static_rate}, from.c_str());
  return 0;
}
