// SPDX-License-Identifier: MIT
#include "progress.h"

#include <time.h>

#include <chrono>
#include <cstdio>

namespace qpconnect::tools {
namespace {

std::string Seconds(double s, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, s);
  return buf;
}

}  // namespace

void ProgressLines::EndStage(double now, double cpu) {
  if (!label_.empty()) {
    took_.push_back(
        {label_, now - stage_start_, cpu >= 0 && stage_cpu_ >= 0 ? cpu - stage_cpu_ : -1});
  }
  label_.clear();
  stage_.clear();
  detail_.clear();
}

void ProgressLines::Stage(std::string label, std::string what, double now, double cpu) {
  EndStage(now, cpu);
  if (took_.empty() && start_cpu_ < 0) start_cpu_ = cpu;
  label_ = std::move(label);
  stage_ = std::move(what);
  stage_start_ = now;
  stage_cpu_ = cpu;
}

std::optional<std::string> ProgressLines::Tick(double now) {
  if (stage_.empty() || now - start_ < pacing_.quiet_for) return std::nullopt;
  if (printed_ && now - last_print_ < pacing_.every) return std::nullopt;
  std::string line = stage_ + (detail_.empty() ? "" : ": " + detail_);
  if (line == last_line_ && now - last_print_ < pacing_.still_every) return std::nullopt;
  last_line_ = line;
  last_print_ = now;
  printed_ = true;
  return tool_ + ": " + Seconds(now - start_, "%.0f s") + ": " + line + " ...";
}

std::optional<std::string> ProgressLines::Summary(double now, double cpu) {
  EndStage(now, cpu);
  if (!printed_) return std::nullopt;
  auto times = [](double wall, double cpu_s) {
    return Seconds(wall, "%.1f s") + (cpu_s >= 0 ? Seconds(cpu_s, " (CPU %.1f s)") : "");
  };
  std::string line = tool_ + ": done in " +
                     times(now - start_, cpu >= 0 && start_cpu_ >= 0 ? cpu - start_cpu_ : -1);
  for (size_t i = 0; i < took_.size(); ++i) {
    line += (i == 0 ? ": " : ", ") + took_[i].label + " " + times(took_[i].wall, took_[i].cpu);
  }
  return line;
}

Progress::Progress(std::string tool, std::ostream* err)
    : err_(err), lines_(std::move(tool), Now()) {
  if (err_ != nullptr) thread_ = std::thread([this] { Loop(); });
}

Progress::~Progress() { Stop(); }

double Progress::Cpu() {
  timespec t{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return -1;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double Progress::Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Progress::Stage(std::string label, std::string what) {
  std::lock_guard<std::mutex> lock(mu_);
  lines_.Stage(std::move(label), std::move(what), Now(), Cpu());
}

void Progress::Detail(std::string detail) {
  std::lock_guard<std::mutex> lock(mu_);
  lines_.Detail(std::move(detail));
}

void Progress::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (stopping_) break;
    if (std::optional<std::string> line = lines_.Tick(Now())) {
      *err_ << *line << "\n" << std::flush;
    }
  }
}

void Progress::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (std::optional<std::string> line = lines_.Summary(Now(), Cpu())) {
    *err_ << *line << "\n" << std::flush;
  }
}

}  // namespace qpconnect::tools
