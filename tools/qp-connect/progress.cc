// SPDX-License-Identifier: MIT
#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace qpconnect::tools {

bool StderrWantsProgress(bool json) { return !json && isatty(STDERR_FILENO) == 1; }

ProgressLine::ProgressLine(std::ostream& out, bool enabled, std::chrono::milliseconds interval,
                           size_t min_total)
    : out_(out), enabled_(enabled), interval_(interval), min_total_(min_total) {}

void ProgressLine::Update(std::string_view step, size_t done, size_t total) {
  if (!enabled_ || total < min_total_) return;
  const Clock::time_point now = Clock::now();
  if (step != step_) {
    step_.assign(step);
    last_draw_ = now;
  }
  // Draw once the step has lasted an interval, then every interval, and the
  // last QP of a step already shown (the line never stops short of the total).
  const bool last_of_shown = done == total && shown_width_ != 0;
  if (!last_of_shown && now - last_draw_ < interval_) return;
  last_draw_ = now;
  char line[160];
  const int n = std::snprintf(line, sizeof line, "qp-connect: %s %zu/%zu QPs (%zu%%)",
                              step_.c_str(), done, total, total == 0 ? 0 : done * 100 / total);
  const size_t width = n > 0 ? static_cast<size_t>(n) : 0;
  out_ << '\r' << line;
  if (width < shown_width_) out_ << std::string(shown_width_ - width, ' ');
  out_.flush();
  shown_width_ = width;
}

void ProgressLine::Clear() {
  if (shown_width_ == 0) return;
  out_ << '\r' << std::string(shown_width_, ' ') << '\r';
  out_.flush();
  shown_width_ = 0;
}

}  // namespace qpconnect::tools
