// SPDX-License-Identifier: MIT
// qp-mesh's command line (docs/mesh.md), parsed without MPI so it is
// unit-testable.
#pragma once

#include <string>
#include <vector>

#include "qpconnect/mesh.h"
#include "qpconnect/result.h"

namespace qpconnect::tools {

struct MeshCliOptions {
  MeshOptions mesh;
  bool json = false;
  bool help = false;
  bool version = false;
  std::vector<std::string> notes;  // deprecation notes for stderr (usage.h PrintNotes)
};

// kInvalidArgument naming the option for a bad or unknown option.
Result<MeshCliOptions> ParseMeshOptions(const std::vector<std::string>& args);

std::string MeshHelpText();

}  // namespace qpconnect::tools
