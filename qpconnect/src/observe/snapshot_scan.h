// SPDX-License-Identifier: MIT
// The snapshot file's fast path (private to the observe library): a reader
// that scans the text once, straight into a Snapshot, with no JSON tree. A
// job's snapshots hold a million QPs; through a JSON tree (nlohmann) reading
// them took most of qp-validate's time and memory.
//
// It accepts what SnapshotFromJson() accepts and gives the same Snapshot,
// but has no words for faults: on anything it does not expect (malformed
// JSON, a missing or out-of-range field, an escape in a string, another
// version) it returns nullopt and SnapshotFromJson() reads the text again
// through the JSON tree to say what is wrong. Unknown members are skipped.
//
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string_view>

#include "qpconnect/observe/snapshot.h"

namespace qpconnect::snapshot_internal {

std::optional<Snapshot> ScanSnapshot(std::string_view text);

}  // namespace qpconnect::snapshot_internal
