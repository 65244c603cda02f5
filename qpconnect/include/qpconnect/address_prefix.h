// SPDX-License-Identifier: MIT
// The subnets of the addresses behind RoCE v2 GIDs (issue 39): a RoCE v2
// GID is an IP address on a netdev, and the prefix length that address has
// there says which of the peer's addresses share its subnet. Each side
// publishes the prefix length of every entry of its GID table
// (GidEntry::prefix_len, read from its netdevs before the exchange), so that
// the joint GID choice (gid_pair.h), computed by both sides from the same two
// descriptions, prefers a pair in one subnet over a pair that needs a router.
//
// Prefix lengths are the address's own: IPv4 1..32 (an IPv4-mapped GID's
// last 32 bits), IPv6 1..128; 0 is unknown.
//
// Thread-safety: pure functions. Part of qpconnect::core (no verbs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"

namespace qpconnect {

// One address of a netdev as the kernel has it (IPv4 as ::ffff:a.b.c.d).
struct AddressPrefix {
  std::string netdev;
  Gid address{};
  uint8_t prefix_len = 0;

  friend bool operator==(const AddressPrefix&, const AddressPrefix&) = default;
};

// Sets GidEntry::prefix_len of each RoCE v2 entry of local.gid_table, and of
// local.path.sgid, whose address `addresses` lists on the entry's netdev
// (an entry without a netdev: on any netdev, when the address is on exactly
// one). Entries not found keep 0 (unknown).
void PublishPrefixLengths(EndpointInfo& local, const std::vector<AddressPrefix>& addresses);

// Whether `addr` lies in the subnet of `net` with `prefix_len` bits (an
// IPv4-mapped `net`: an IPv4 prefix, and `addr` must be IPv4-mapped too).
// False when prefix_len is 0 (unknown) or longer than the family allows.
bool InSubnet(const Gid& net, uint8_t prefix_len, const Gid& addr);

// How two GID entries' addresses relate, from their published prefixes.
enum class SubnetRelation : uint8_t {
  kShared,   // both prefixes known, each address in the other's subnet
  kUnknown,  // a prefix missing (an older peer), and the known one allows it
  kApart,    // a known prefix leaves the other address outside: a router's way
};
// Symmetric: SubnetRelationOf(a, b) == SubnetRelationOf(b, a).
SubnetRelation SubnetRelationOf(const GidEntry& a, const GidEntry& b);

// "10.99.0.1/24", "fd99::1/64", or the address alone when its prefix is
// unknown ("10.99.0.1/?").
std::string AddressWithPrefix(const GidEntry& e);

}  // namespace qpconnect
