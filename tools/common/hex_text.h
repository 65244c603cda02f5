// SPDX-License-Identifier: MIT
// "0x" and `width` lowercase hex digits (at least): how the tools print
// GUID parts, P_Keys, QPNs and vendor ids.
#pragma once

#include <cstdio>
#include <string>

namespace qpconnect::tools {

inline std::string Hex(unsigned long long v, int width) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, v);
  return buf;
}

}  // namespace qpconnect::tools
