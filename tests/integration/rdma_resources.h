// SPDX-License-Identifier: MIT
// Counting the kernel's RDMA objects (`rdma resource show`), so lab tests can
// check that a path, successful or failing, released everything it created.
#pragma once

#include <cstdio>
#include <ostream>
#include <string>

namespace qpconnect::testing {

// Lines of `rdma resource show KIND` for `dev` (kernel-owned objects included;
// tests compare counts before and after); -1 if the command cannot run.
inline int CountResources(const char* kind, const std::string& dev) {
  // QPs are listed per link (DEV/PORT), the other objects per device.
  std::string where = std::string(kind) == "qp" ? " link " + dev + "/1" : " dev " + dev;
  std::string cmd = std::string("rdma resource show ") + kind + where + " 2>/dev/null";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return -1;
  int lines = 0;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) ++lines;
  pclose(f);
  return lines;
}

struct Counts {
  int qp, cq, mr, pd;
  bool operator==(const Counts&) const = default;
};

inline Counts CountAll(const std::string& dev) {
  return {CountResources("qp", dev), CountResources("cq", dev), CountResources("mr", dev),
          CountResources("pd", dev)};
}

inline std::ostream& operator<<(std::ostream& o, const Counts& c) {
  return o << "{qp " << c.qp << ", cq " << c.cq << ", mr " << c.mr << ", pd " << c.pd << "}";
}

}  // namespace qpconnect::testing
