// SPDX-License-Identifier: MIT
// The records ranks gather at each mesh checkpoint (mesh.cc): which pairs
// failed and the connect statistics, as text. Internal to qpconnect_mesh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qpconnect/mesh.h"
#include "qpconnect/result.h"

namespace qpconnect::mesh_internal {

// What a rank tells every other at a checkpoint: its pairs that failed (each
// pair once: the lower rank's record wins when both sides report it) and its
// connect statistics. One record per line, tab-separated:
//   S <pairs connected, as lower rank> <slowest edge ms> <its peer>
//   F <rank a> <rank b> <host a> <host b> <code> <what>
struct CheckpointRecord {
  std::vector<MeshPairFailure> failures;
  std::vector<ErrorCode> codes;  // parallel to failures
  uint64_t connected = 0;
  double slowest_ms = -1;
  int slowest_peer = -1;
};

// One record per line; tabs and newlines inside hosts and texts become
// spaces.
std::string EncodeCheckpoint(const CheckpointRecord& c);

// Lenient: a record it cannot read is skipped (the sender is one of ours, in
// the same job; a broken line must not crash the others); an unknown error
// code reads as kIncompatible.
CheckpointRecord DecodeCheckpoint(const std::string& text);

}  // namespace qpconnect::mesh_internal
