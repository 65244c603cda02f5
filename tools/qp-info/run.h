// SPDX-License-Identifier: MIT
// qp-info: lists RDMA devices and ports with what matters for connecting QPs.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace qpconnect::tools {

// Runs qp-info with `args` (argv without argv[0]); returns the exit status
// (tools/common/exit_codes.h).
int RunQpInfo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace qpconnect::tools
