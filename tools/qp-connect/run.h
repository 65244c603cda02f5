// SPDX-License-Identifier: MIT
// qp-connect: connect QPs by hand with a peer and prove it with traffic.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace qpconnect::tools {

// Runs qp-connect with `args` (argv without argv[0]); returns the exit status
// (tools/common/exit_codes.h). With --oob stdio the exchange uses the process's
// standard input and output, so reports go to `err`.
int RunQpConnect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace qpconnect::tools
