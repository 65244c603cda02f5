// SPDX-License-Identifier: MIT
// qp-connect's output while it works (issue 15): the progress line is drawn
// only when enabled and erased before anything else is written; -v steps are
// flushed as they happen (before the step that may last), and nothing of the
// kind reaches a stream that is not the process's terminal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "progress.h"
#include "run.h"

namespace qpconnect::tools {
namespace {

using std::chrono::milliseconds;

TEST(ProgressLine, DisabledWritesNothing) {
  std::ostringstream err;
  {
    ProgressLine p(err, false, milliseconds(0), 1);
    for (size_t i = 1; i <= 1000; ++i) p.Update("create", i, 1000);
    p.Clear();
  }
  EXPECT_EQ(err.str(), "");
}

TEST(ProgressLine, EnabledRedrawsOneLineAndErasesIt) {
  std::ostringstream err;
  ProgressLine p(err, true, milliseconds(0), 1);
  p.Update("rtr", 1, 200);
  p.Update("rtr", 200, 200);
  const std::string drawn = err.str();
  EXPECT_NE(drawn.find("\rqp-connect: rtr 1/200 QPs (0%)"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("\rqp-connect: rtr 200/200 QPs (100%)"), std::string::npos) << drawn;
  EXPECT_EQ(drawn.find('\n'), std::string::npos) << "a progress line never adds a line";
  p.Clear();
  const std::string erased = err.str().substr(drawn.size());
  EXPECT_EQ(erased.front(), '\r');
  EXPECT_EQ(erased.back(), '\r');
  EXPECT_EQ(erased.find_first_not_of(" \r"), std::string::npos) << "only blanks erase it";
  p.Clear();
  EXPECT_EQ(err.str().size(), drawn.size() + erased.size()) << "nothing to erase twice";
}

TEST(ProgressLine, SmallAndShortStepsDrawNothing) {
  std::ostringstream err;
  ProgressLine small(err, true, milliseconds(0), 100);
  for (size_t i = 1; i <= 99; ++i) small.Update("create", i, 99);
  ProgressLine quick(err, true, milliseconds(60000), 1);
  for (size_t i = 1; i <= 10000; ++i) quick.Update("create", i, 10000);
  EXPECT_EQ(err.str(), "");
}

// A stream buffer that logs, at each flush, what was written since the last
// one, into a log shared by stdout and stderr: the order of flushes is the
// order a reader of the terminal or pipe sees.
class FlushLog : public std::stringbuf {
 public:
  FlushLog(std::vector<std::string>& log, std::string tag) : log_(log), tag_(std::move(tag)) {}

 protected:
  int sync() override {
    std::string all = str();
    if (all.size() > sent_) log_.push_back(tag_ + all.substr(sent_));
    sent_ = all.size();
    return 0;
  }

 private:
  std::vector<std::string>& log_;
  std::string tag_;
  size_t sent_ = 0;
};

TEST(QpConnectOutput, VerboseStepIsFlushedBeforeTheDeviceIsOpened) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("qpc_progress_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> log;
  FlushLog out_buf(log, "out:");
  FlushLog err_buf(log, "err:");
  std::ostream out(&out_buf);
  std::ostream err(&err_buf);
  // No such device anywhere: the open fails, after the step was announced.
  int rc = RunQpConnect({"-v", "--oob", "file", "--oob-dir", dir.string(), "--role", "server", "-d",
                         "qpc-no-such-device", "--qps", "5000"},
                        out, err);
  out.flush();
  err.flush();
  std::filesystem::remove_all(dir);
  EXPECT_NE(rc, 0);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.front().rfind("out:qp-connect: opening qpc-no-such-device: 5000 rc QP(s)", 0), 0u)
      << log.front();
  // Nothing drew a progress line on a stream that is not the terminal.
  for (const auto& entry : log) EXPECT_EQ(entry.find('\r'), std::string::npos) << entry;
}

TEST(QpConnectOutput, JsonPrintsNoStepsAndNoProgress) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("qpc_progress_json_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ostringstream out;
  std::ostringstream err;
  int rc = RunQpConnect({"-v", "--json", "--oob", "file", "--oob-dir", dir.string(), "--role",
                         "server", "-d", "qpc-no-such-device"},
                        out, err);
  std::filesystem::remove_all(dir);
  EXPECT_NE(rc, 0);
  EXPECT_EQ(out.str().find("qp-connect: opening"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().front(), '{');
  EXPECT_EQ(err.str().find('\r'), std::string::npos);
}

}  // namespace
}  // namespace qpconnect::tools
