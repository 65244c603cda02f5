// SPDX-License-Identifier: MIT
// A snapshot (snapshot.h) as text, the table qp-inspect prints: the QPs of
// its last sample with their PSN movement since the first sample, and the
// ports' counters. Pure, so the format is unit-tested without a kernel.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "qpconnect/observe/snapshot.h"

namespace qpconnect {

// "S", "T (stopped)", "Z (zombie)", ...; "-" when unknown.
std::string ProcessStateText(const std::string& state);

// The table of `snapshot` (see docs/inspect.md for a sample).
std::string FormatSnapshotText(const Snapshot& snapshot);

}  // namespace qpconnect
