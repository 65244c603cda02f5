// SPDX-License-Identifier: MIT
#include "gid_report.h"

#include <chrono>
#include <cstdlib>
#include <thread>

namespace qpconnect::tools {

std::string GidPairLine(const GidPairChoice& choice) {
  if (choice.outcome != GidPairOutcome::kChosen) return "";
  const size_t n = choice.others.size();
  const std::string others = n == 0 ? ""
                                    : "; " + std::to_string(n) +
                                          (n == 1 ? " other pair" : " other pairs") +
                                          " not taken (-v or --json: gid-pair-chosen says why)";
  return "qp-connect: GID pair: local " + GidEntryLabel(*choice.local) + ", remote " +
         GidEntryLabel(*choice.remote) + " (" + choice.why + others + ")\n";
}

std::function<void()> PauseBeforeRtrFromEnv() {
  const char* v = std::getenv("QPC_TEST_PAUSE_BEFORE_RTR_MS");
  if (v == nullptr) return {};
  char* end = nullptr;
  const long ms = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || ms <= 0 || ms > 60000) return {};
  return [ms] { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
}

}  // namespace qpconnect::tools
