// SPDX-License-Identifier: MIT
#include "qpconnect/device_info.h"

#include <cstdio>

namespace qpconnect {

std::string GuidToString(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%04x:%04x:%04x:%04x", static_cast<unsigned>(guid >> 48) & 0xffffU,
                static_cast<unsigned>(guid >> 32) & 0xffffU,
                static_cast<unsigned>(guid >> 16) & 0xffffU, static_cast<unsigned>(guid) & 0xffffU);
  return buf;
}

}  // namespace qpconnect
