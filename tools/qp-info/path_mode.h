// SPDX-License-Identifier: MIT
// qp-info --path DEST: the SA's PathRecord from a local port to DEST, over
// libibumad only (no verbs device needed; works under ibsim's umad2sim).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli_args.h"
#include "qpconnect/path_record.h"
#include "qpconnect/sa/path_resolver.h"

namespace qpconnect::tools {

// Runs the path query described by `args` (--path, -d, -i, --pkey, --sl,
// --timeout, --json); returns the exit status (exit_codes.h).
int RunPathQuery(const ParsedArgs& args, std::ostream& out, std::ostream& err);

// The record as qp-info prints it (docs/ib-paths.md lists the fields).
std::string FormatPathRecordText(const sa::SaPort& port, const PathRecord& record);

}  // namespace qpconnect::tools
