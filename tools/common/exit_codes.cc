// SPDX-License-Identifier: MIT
#include "exit_codes.h"

#include <cstdio>

namespace qpconnect::tools {

std::string_view ExitMeaning(int status) {
  for (const ExitStatusRow& row : kExitStatuses) {
    if (row.status == status) return row.meaning;
  }
  return "";
}

std::string ExitStatusHelp(std::span<const ExitCode> used) {
  std::string text = "Exit status:\n";
  for (ExitCode c : used) {
    char number[16];
    std::snprintf(number, sizeof number, "  %-5d", static_cast<int>(c));
    text += number;
    text += ExitMeaning(c);
    text += '\n';
  }
  return text;
}

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
