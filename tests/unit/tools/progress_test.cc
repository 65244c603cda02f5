// SPDX-License-Identifier: MIT
// Progress lines (tools/common/progress.h, issue 41): silent for 2 s, then at
// most a line a second, a still-running stage repeated only every 10 s, and
// a closing line with the stages' times only after a line was printed.
#include "progress.h"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace qpconnect::tools {
namespace {

TEST(ProgressLines, SilentForTwoSecondsThenALineASecondAtMost) {
  ProgressLines p("qp-validate", 100.0);
  p.Stage("read", "reading 1000 files (372 MB)", 100.0);
  p.Detail("10 of 1000 read");
  EXPECT_EQ(p.Tick(101.9), std::nullopt) << "the first 2 s are quiet";
  EXPECT_EQ(p.Tick(102.0), "qp-validate: 2 s: reading 1000 files (372 MB): 10 of 1000 read ...");
  std::vector<std::string> lines;
  for (int i = 1; i <= 256; ++i) {  // a detail every 1/64 s for 4 s
    p.Detail(std::to_string(10 + i) + " of 1000 read");
    if (auto line = p.Tick(102.0 + i / 64.0)) lines.push_back(*line);
  }
  ASSERT_EQ(lines.size(), 4u) << "one a second, not one a detail";
  EXPECT_EQ(lines[0], "qp-validate: 3 s: reading 1000 files (372 MB): 74 of 1000 read ...");
  EXPECT_EQ(lines[3], "qp-validate: 6 s: reading 1000 files (372 MB): 266 of 1000 read ...");
}

TEST(ProgressLines, AStageThatSaysNothingNewIsRepeatedEveryTenSeconds) {
  ProgressLines p("qp-validate", 0.0);
  p.Stage("read", "reading", 0.0);
  p.Stage("pair and judge", "pairing and judging 999875 QPs", 1.5);
  std::vector<std::string> lines;
  for (int t = 0; t <= 200; ++t) {
    if (auto line = p.Tick(t / 8.0)) lines.push_back(*line);
  }
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "qp-validate: 2 s: pairing and judging 999875 QPs ...");
  EXPECT_EQ(lines[1], "qp-validate: 12 s: pairing and judging 999875 QPs ...");
  p.Stage("print", "writing the verdict", 25.25);
  EXPECT_EQ(p.Tick(25.3), "qp-validate: 25 s: writing the verdict ...") << "a new stage at once";
  EXPECT_EQ(p.Summary(27.5),
            "qp-validate: done in 27.5 s: read 1.5 s, pair and judge 23.8 s, print 2.2 s");
}

TEST(ProgressLines, TheClosingLineHasTheCpuTimesWhenKnown) {
  ProgressLines p("qp-validate", 0.0);
  p.Stage("read", "reading", 0.0, 0.5);
  p.Stage("print", "writing", 4.0, 2.5);
  ASSERT_TRUE(p.Tick(3.0));
  EXPECT_EQ(
      p.Summary(6.0, 3.5),
      "qp-validate: done in 6.0 s (CPU 3.0 s): read 4.0 s (CPU 2.0 s), print 2.0 s (CPU 1.0 s)");
}

TEST(ProgressLines, AShortRunSaysNothing) {
  ProgressLines p("qp-validate", 0.0);
  p.Stage("read", "reading", 0.0);
  EXPECT_EQ(p.Tick(1.0), std::nullopt);
  p.Stage("print", "writing", 1.5);
  EXPECT_EQ(p.Tick(1.9), std::nullopt);
  EXPECT_EQ(p.Summary(1.99), std::nullopt);
}

TEST(Progress, WithoutAStreamStartsNothingAndSaysNothing) {
  Progress silent("qp-validate", nullptr);
  silent.Stage("read", "reading");
  silent.Stop();
  std::ostringstream err;
  {
    Progress quick("qp-validate", &err);
    quick.Stage("read", "reading");
  }  // stopped well within 2 s
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace qpconnect::tools
