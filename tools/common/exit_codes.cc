// SPDX-License-Identifier: MIT
#include "exit_codes.h"

namespace qpconnect::tools {

int ExitStatus(ExitStage stage, const Error& e) {
  // Buffers the host cannot give for the sizes the user asked: no verbs call
  // failed, the sizes are the fault.
  if (stage == ExitStage::kOpen && e.operation == "allocate buffers") return kExitUsage;
  if (stage == ExitStage::kPath && e.code != ErrorCode::kInvalidArgument) {
    if (e.attribute == "port") return kExitNoDevice;
    if (e.code == ErrorCode::kNotFound && e.attribute == "path") return kExitNoPath;
    if (e.code == ErrorCode::kIncompatible && e.attribute == "pkey") return kExitNoPath;
  }
  return kExitTable[static_cast<size_t>(stage)][static_cast<size_t>(e.code)];
}

}  // namespace qpconnect::tools
