// SPDX-License-Identifier: MIT
// Validator findings as text, shared by qp-validate's endpoint and trace modes.
//
// Thread-safety: pure functions.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/diagnostic.h"

namespace qpconnect::tools {

// "local side, QP 0 and 2 more", "both sides", ...
std::string FindingWhere(const Finding& f);

// One block per finding, each line prefixed with `indent`:
//   error   mtu-mismatch  path_mtu  [both sides, QP 0]
//           the local path_mtu is 512 but the remote path_mtu is 1024
//           local: 512   remote: 1024
//           fix: program the same path_mtu on both sides ...
// Unchecked findings take one line.
void PrintFindingsText(std::ostream& out, const std::vector<Finding>& findings,
                       std::string_view indent = {});

// "1 error, 2 warnings, 0 notes"
std::string FindingCounts(size_t errors, size_t warnings, size_t infos);

}  // namespace qpconnect::tools
