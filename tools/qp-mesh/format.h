// SPDX-License-Identifier: MIT
// qp-mesh's report of one rank (docs/mesh.md), as text or one JSON line:
// its edges and timings, and on rank 0 the summary of the whole mesh. Built
// without MPI, so it is unit-testable.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "qpconnect/mesh.h"
#include "qpconnect/result.h"

namespace qpconnect::tools {

// The text report: one line for the rank, one per edge (and the error
// findings of the pairs this rank reports), rank 0's summary and failed
// pairs, and the rank's error when `verdict` failed.
std::string MeshReportText(const MeshReport& r, const MeshOptions& o, const Result<void>& verdict);

// The same as one JSON document on one line (docs/json.md's conventions).
std::string MeshReportJson(const MeshReport& r, const Result<void>& verdict);

}  // namespace qpconnect::tools
