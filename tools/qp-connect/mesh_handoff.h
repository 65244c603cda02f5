// SPDX-License-Identifier: MIT
// qp-connect --oob mpi: every rank of an mpirun job connects to every other.
// The mesh is qp-mesh's (docs/mesh.md): qp-connect hands over to it by
// exec, so that qp-connect itself never links MPI (libmpi and MPI_Init would
// cost every run's start-up, docs/performance.md).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace qpconnect::tools {

// The arguments for qp-mesh when `args` ask for --oob mpi (as "--oob mpi" or
// "--oob=mpi"): `args` without that option; nullopt otherwise. The rest is
// qp-mesh's to parse (it refuses what it does not know, e.g. --psk-file).
std::optional<std::vector<std::string>> MeshArgs(const std::vector<std::string>& args);

// Where to look for qp-mesh, in order: $QPC_QP_MESH when set (`env`), then
// next to this executable, then the build tree's ../qp-mesh/qp-mesh, then
// "qp-mesh" (PATH).
std::vector<std::string> MeshCandidates(const std::string& self_dir, const char* env);

// With --oob mpi: execs the first qp-mesh found and does not return; if none
// can be run, says so on `err` and returns 2. Without: nullopt.
std::optional<int> HandOffToMesh(const std::vector<std::string>& args, std::ostream& err);

}  // namespace qpconnect::tools
