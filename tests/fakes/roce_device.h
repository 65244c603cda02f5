// SPDX-License-Identifier: MIT
// An rxe-like RoCE device's facts (DeviceInfo), for describing a side without
// a device: describe_test.cc and the fake env of the connector's flow tests.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "qpconnect/device_info.h"

namespace qpconnect::fakes {

// A RoCE v2 GID entry at `index` for `text` ("::ffff:10.99.0.1").
inline GidEntry RoceV2Gid(uint16_t index, const char* text) {
  GidEntry e;
  e.index = index;
  e.gid = *GidFromString(text);
  e.type = GidType::kRoceV2;
  e.family = FamilyOfGid(e.gid, e.type);
  return e;
}

// Device `name` (node GUID `guid`, rd_atom limits 128) with port 1 ACTIVE on
// Ethernet, active MTU 1024, holding `gids` and `pkeys`.
inline DeviceInfo RxeDevice(const char* name, uint64_t guid, std::vector<GidEntry> gids,
                            std::vector<PkeyEntry> pkeys) {
  DeviceInfo d;
  d.name = name;
  d.node_guid = guid;
  d.limits.max_qp_rd_atom = 128;
  d.limits.max_qp_init_rd_atom = 128;
  PortInfo p;
  p.facts.port_num = 1;
  p.facts.link_layer = LinkLayer::kEthernet;
  p.facts.active = true;
  p.facts.active_mtu = Mtu::k1024;
  p.state = "ACTIVE";
  p.gids = std::move(gids);
  p.pkeys = std::move(pkeys);
  d.ports.push_back(std::move(p));
  return d;
}

}  // namespace qpconnect::fakes
