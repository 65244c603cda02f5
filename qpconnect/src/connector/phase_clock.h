// SPDX-License-Identifier: MIT
// The time a phase of a connection takes, added to its slot on every path
// out of the scope that measures it (the connector's phases, the composer's
// steps). Private to src/connector.
//
// Thread-safety: one thread.
#pragma once

#include <chrono>

namespace qpconnect::connector_internal {

class PhaseClock {
 public:
  using Clock = std::chrono::steady_clock;
  explicit PhaseClock(std::chrono::nanoseconds& slot) : slot_(slot), start_(Clock::now()) {}
  ~PhaseClock() { slot_ += Clock::now() - start_; }
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

 private:
  std::chrono::nanoseconds& slot_;
  Clock::time_point start_;
};

}  // namespace qpconnect::connector_internal
