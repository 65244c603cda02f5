// SPDX-License-Identifier: MIT
// qp-connect's progress line: on a terminal, long per-QP steps (create, INIT,
// RTR, RTS, traffic on many QPs) redraw one line on stderr,
//   "qp-connect: rtr 4200/10000 QPs (42%)"
// at most every `interval`, and erase it when the step ends. Nothing is
// written when disabled (stderr not a terminal, or --json), nor for steps on
// fewer than `min_total` QPs or that end within the first interval.
//
// Thread-safety: one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

namespace qpconnect::tools {

// Whether a progress line belongs on the process's stderr: it is a terminal
// and the output is not JSON.
bool StderrWantsProgress(bool json);

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  ProgressLine(std::ostream& out, bool enabled,
               std::chrono::milliseconds interval = std::chrono::milliseconds(200),
               size_t min_total = 100);
  ~ProgressLine() { Clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `done` of `total` QPs through `step`. A new step restarts the interval.
  void Update(std::string_view step, size_t done, size_t total);
  // Erases the line if one is shown (before any other output).
  void Clear();

  bool enabled() const { return enabled_; }

 private:
  std::ostream& out_;
  bool enabled_;
  std::chrono::milliseconds interval_;
  size_t min_total_;
  std::string step_;
  Clock::time_point last_draw_{};  // or when the step started
  size_t shown_width_ = 0;         // characters of the line on screen; 0: none
};

}  // namespace qpconnect::tools
