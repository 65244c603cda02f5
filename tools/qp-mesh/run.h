// SPDX-License-Identifier: MIT
// qp-mesh: an all-to-all RDMA QP mesh over MPI (docs/mesh.md). Every rank
// prints its own report in one write (text or one JSON line); rank 0 adds the
// mesh summary. Every rank exits with the same status (mesh.h: the verdict is
// collective).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace qpconnect::tools {

// Runs qp-mesh with `args` (argv without argv[0]): parses them (--help and
// --version answer without MPI), then initializes MPI, connects the mesh,
// writes this rank's report to `out` (to `err` when the mesh failed, in text
// mode) and finalizes MPI. Returns the exit status (tools/common/
// exit_codes.h: ExitStage::kWhole for the mesh's verdict). REQUIRES: called
// once per process (MPI is initialized once).
int RunQpMesh(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace qpconnect::tools
