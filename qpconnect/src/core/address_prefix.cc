// SPDX-License-Identifier: MIT
#include "qpconnect/address_prefix.h"

#include <arpa/inet.h>

#include <cstring>

namespace qpconnect {
namespace {

bool IsRoceV2(const GidEntry& g) { return g.type == GidType::kRoceV2; }

// The prefix length of `g`'s address among `addresses`, 0 if not listed.
uint8_t PrefixOf(const GidEntry& g, const std::vector<AddressPrefix>& addresses) {
  const AddressPrefix* found = nullptr;
  size_t holders = 0;
  for (const AddressPrefix& a : addresses) {
    if (a.address != g.gid) continue;
    if (!g.netdev.empty()) {
      if (a.netdev == g.netdev) return a.prefix_len;
      continue;
    }
    found = &a;
    ++holders;
  }
  return holders == 1 ? found->prefix_len : 0;
}

}  // namespace

void PublishPrefixLengths(EndpointInfo& local, const std::vector<AddressPrefix>& addresses) {
  for (GidEntry& g : local.gid_table) {
    if (IsRoceV2(g) && g.prefix_len == 0) g.prefix_len = PrefixOf(g, addresses);
  }
  if (local.path.sgid && IsRoceV2(*local.path.sgid) && local.path.sgid->prefix_len == 0) {
    local.path.sgid->prefix_len = PrefixOf(*local.path.sgid, addresses);
  }
}

bool InSubnet(const Gid& net, uint8_t prefix_len, const Gid& addr) {
  if (prefix_len == 0) return false;
  const bool v4 = IsIpv4MappedGid(net);
  if (v4 != IsIpv4MappedGid(addr)) return false;
  if (prefix_len > (v4 ? 32 : 128)) return false;
  const size_t bits = v4 ? 96u + prefix_len : prefix_len;
  const size_t whole = bits / 8;
  if (std::memcmp(net.data(), addr.data(), whole) != 0) return false;
  if (const size_t rest = bits % 8; rest != 0) {
    const auto mask = static_cast<uint8_t>(0xff << (8 - rest));
    if ((net[whole] & mask) != (addr[whole] & mask)) return false;
  }
  return true;
}

SubnetRelation SubnetRelationOf(const GidEntry& a, const GidEntry& b) {
  // Each known prefix is asked whether it holds the other address.
  if (a.prefix_len != 0 && !InSubnet(a.gid, a.prefix_len, b.gid)) return SubnetRelation::kApart;
  if (b.prefix_len != 0 && !InSubnet(b.gid, b.prefix_len, a.gid)) return SubnetRelation::kApart;
  return a.prefix_len != 0 && b.prefix_len != 0 ? SubnetRelation::kShared
                                                : SubnetRelation::kUnknown;
}

std::string AddressWithPrefix(const GidEntry& e) {
  std::string text;
  if (IsIpv4MappedGid(e.gid)) {
    char buf[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, e.gid.data() + 12, buf, sizeof buf);
    text = buf;
  } else {
    text = GidToString(e.gid);
  }
  return text + "/" + (e.prefix_len != 0 ? std::to_string(e.prefix_len) : std::string("?"));
}

}  // namespace qpconnect
