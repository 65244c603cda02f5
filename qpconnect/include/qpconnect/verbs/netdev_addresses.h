// SPDX-License-Identifier: MIT
// The IP addresses of netdevs with their prefix lengths, as getifaddrs(3)
// lists them (issue 39): published with a RoCE GID table so that the joint
// GID choice knows which GID pairs share a subnet (address_prefix.h). The
// composer reaches it through QpEnv::ReadAddressPrefixes (qp_control.h),
// which unit tests replace.
//
// Thread-safety: each call reads its own list.
#pragma once

#include <string>
#include <vector>

#include "qpconnect/address_prefix.h"

namespace qpconnect::verbs {

// Every IPv4 and IPv6 address of the netdevs `names` now (an empty list:
// of every netdev), IPv4 as ::ffff:a.b.c.d with its IPv4 prefix length.
// Nothing when the list cannot be read.
std::vector<AddressPrefix> ReadNetdevAddresses(const std::vector<std::string>& names);

}  // namespace qpconnect::verbs
