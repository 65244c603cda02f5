// SPDX-License-Identifier: MIT
// Progress lines on stderr for a run that takes a while (issue 41,
// docs/inspect.md): nothing in the first 2 s, then at most a line a second
// saying what the tool is doing ("qp-validate: 3 s: reading 1000 files (385
// MB): 412 of 1000 read, 152 MB ..."), and at the end one line with where
// the time went (wall and CPU time by stage). Lines are plain (no carriage
// return): a CI log keeps them as a terminal shows them.
//
// ProgressLines decides what to print and when, from the times it is given
// (unit-tested with made-up times); Progress runs it on a thread that wakes
// every quarter second, so that a stage which cannot report (pairing a
// million QPs) is still seen to go on.
//
// Thread-safety: ProgressLines is not thread-safe; Progress's methods may be
// called from one thread while its own thread prints.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace qpconnect::tools {

class ProgressLines {
 public:
  // Silent for the first `quiet_for` seconds of a run; then a line when
  // the stage or its detail changed, at most one each `every` seconds, and
  // one each `still_every` seconds while nothing changed.
  struct Pacing {
    double quiet_for = 2.0;
    double every = 1.0;
    double still_every = 10.0;
  };

  ProgressLines(std::string tool, double start) : ProgressLines(std::move(tool), start, Pacing{}) {}
  ProgressLines(std::string tool, double start, Pacing pacing)
      : tool_(std::move(tool)), start_(start), pacing_(pacing) {}

  // A new stage begins at `now`, the previous one ends: `label` names it
  // in Summary() ("pair and judge"), `what` in the lines ("pairing and
  // judging 999875 QPs"). `cpu`: the process's CPU seconds then, if known
  // (on a loaded machine the wall time says little of the work done).
  void Stage(std::string label, std::string what, double now, double cpu = -1);
  // What the stage has done so far ("412 of 1000 snapshots"); "" for none.
  void Detail(std::string detail) { detail_ = std::move(detail); }

  // The line to print at `now`, if one is due: "TOOL: 3 s: STAGE: DETAIL ...".
  std::optional<std::string> Tick(double now);

  // At the end of the run (`now`): "TOOL: done in 12.3 s: read 3.1 s, ..."
  // when the run printed a progress line, else nullopt (a short run says
  // nothing); with the CPU times when known ("read 3.1 s (CPU 2.9 s)"). The
  // stage in course ends.
  std::optional<std::string> Summary(double now, double cpu = -1);

 private:
  void EndStage(double now, double cpu);

  std::string tool_;
  double start_;
  Pacing pacing_;
  std::string label_;
  std::string stage_;
  std::string detail_;
  double stage_start_ = 0;
  double stage_cpu_ = -1;
  double start_cpu_ = -1;
  struct Took {
    std::string label;
    double wall;
    double cpu;  // < 0 unknown
  };
  std::vector<Took> took_;  // finished stages
  std::string last_line_;   // without the time
  double last_print_ = -1;
  bool printed_ = false;
};

// ProgressLines on a thread, writing to `err` (nullptr: silent; nothing is
// started). The clock is std::chrono::steady_clock.
class Progress {
 public:
  Progress(std::string tool, std::ostream* err);
  ~Progress();  // Stop()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // As ProgressLines's, at the time they are called.
  void Stage(std::string label, std::string what);
  void Detail(std::string detail);
  // Ends the thread and prints the summary line if any progress line was
  // printed. After Stop() the caller may write to `err` again.
  void Stop();

 private:
  static double Now();
  static double Cpu();
  void Loop();

  std::ostream* err_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  ProgressLines lines_;
  std::thread thread_;
};

}  // namespace qpconnect::tools
