// qp-inspect's text output: the QPs of a snapshot's last sample as a table,
// with their PSN movement since the first sample, and the ports' counters.
// Pure, so the format is unit-tested without a kernel.
#pragma once

#include <string>

#include "qpconnect/snapshot.h"

namespace qpconnect::tools::inspect {

// "S", "T (stopped)", "Z (zombie)", ...; "-" when unknown.
std::string ProcessStateText(const std::string& state);

// The table of `snapshot` (see docs/inspect.md for a sample).
std::string FormatSnapshotText(const Snapshot& snapshot);

}  // namespace qpconnect::tools::inspect
