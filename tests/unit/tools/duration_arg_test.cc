// SPDX-License-Identifier: MIT
// The one parser of every duration option (tools/common/duration_arg.h):
// seconds with fractions and units, the old millisecond spelling of the
// options that took milliseconds (with its note), and errors that name the
// option and the value.
#include "duration_arg.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace qpconnect::tools {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr DurationOption kSeconds{"--timeout", milliseconds(1), hours(24)};
constexpr DurationOption kWasMs{"--timeout", milliseconds(10), seconds(600), true};

nanoseconds Value(const std::string& text, const DurationOption& o = kSeconds) {
  auto d = ParseDuration(text, o);
  EXPECT_TRUE(d) << text << ": " << (d ? "" : d.error().detail);
  return d ? d->value : nanoseconds(-1);
}

std::string ErrorOf(const std::string& text, const DurationOption& o = kSeconds) {
  auto d = ParseDuration(text, o);
  EXPECT_FALSE(d) << text << " parsed";
  if (d) return "";
  EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(d.error().detail.find(std::string(o.name)), std::string::npos)
      << "names the option: " << d.error().detail;
  return d.error().detail;
}

TEST(DurationArg, SecondsFractionsAndUnits) {
  EXPECT_EQ(Value("2"), seconds(2));
  EXPECT_EQ(Value("0.5"), milliseconds(500));
  EXPECT_EQ(Value(".25"), milliseconds(250));
  EXPECT_EQ(Value("1."), seconds(1));
  EXPECT_EQ(Value("500ms"), milliseconds(500));
  EXPECT_EQ(Value("1.5ms"), nanoseconds(1'500'000));
  EXPECT_EQ(Value("2s"), seconds(2));
  EXPECT_EQ(Value("1m"), seconds(60));
  EXPECT_EQ(Value("1.5m"), seconds(90));
  EXPECT_EQ(Value("2h"), hours(2));
  EXPECT_EQ(Value("0.1"), milliseconds(100));  // exact, no binary rounding
  EXPECT_EQ(Value("86400"), hours(24));
  // No note for a spelling that is not deprecated.
  EXPECT_EQ(ParseDuration("3000", kSeconds)->note, "");
}

TEST(DurationArg, InvalidSpellingsNameTheOptionAndValue) {
  for (const std::string bad : {"", "abc", "s", "ms", ".", "1..5", "1.5.2", "2 s", " 2", "2S",
                                "2sec", "1e3", "0x10", "+2", "2ms5", "1,5"}) {
    const std::string e = ErrorOf(bad);
    if (!bad.empty()) {
      EXPECT_NE(e.find("'" + bad + "'"), std::string::npos) << e;
    }
  }
  EXPECT_NE(ErrorOf("5d").find("unknown unit 'd'"), std::string::npos);
}

TEST(DurationArg, NegativeIsRefusedAsSuch) {
  EXPECT_NE(ErrorOf("-1").find("'-1' is negative"), std::string::npos);
  EXPECT_NE(ErrorOf("-0.5s").find("negative"), std::string::npos);
}

TEST(DurationArg, OverflowAndRange) {
  EXPECT_NE(ErrorOf("99999999999999999999999").find("too large"), std::string::npos);
  EXPECT_NE(ErrorOf("9223372036854775807h").find("too large"), std::string::npos);
  EXPECT_NE(ErrorOf("10000000000").find("too large"), std::string::npos);  // 1e19 ns
  const std::string above = ErrorOf("86401");
  EXPECT_NE(above.find("out of range [0.001 s, 86400 s]"), std::string::npos) << above;
  EXPECT_NE(ErrorOf("0").find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("0.5ms").find("(0.0005 s) is out of range"), std::string::npos);
  EXPECT_EQ(Value("24h"), hours(24));
}

TEST(DurationArg, OldMillisecondsStillReadWithANote) {
  auto d = ParseDuration("3000", kWasMs);
  ASSERT_TRUE(d) << d.error().detail;
  EXPECT_EQ(d->value, seconds(3));
  EXPECT_EQ(d->note,
            "--timeout 3000 is read as milliseconds, as before (a bare number of 100 or more); "
            "that spelling is deprecated: write 3000ms or 3s");
  EXPECT_EQ(Value("100", kWasMs), milliseconds(100));
  // Below 100, with a fraction or with a unit: seconds, no note.
  for (const std::string s : {"99", "3", "0.5", "120s", "3000ms", "2.0"}) {
    auto e = ParseDuration(s, kWasMs);
    ASSERT_TRUE(e) << s << ": " << e.error().detail;
    EXPECT_EQ(e->note, "") << s;
  }
  EXPECT_EQ(Value("99", kWasMs), seconds(99));
  EXPECT_EQ(Value("120s", kWasMs), seconds(120));
  EXPECT_EQ(Value("2.0", kWasMs), seconds(2));
  // An option that was in seconds never reads milliseconds.
  EXPECT_EQ(Value("3000"), seconds(3000));
  // The old range's limit, read as milliseconds, is still in range; beyond is not.
  EXPECT_EQ(Value("600000", kWasMs), seconds(600));
  EXPECT_NE(ErrorOf("600001", kWasMs).find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf("99999999999999", kWasMs).find("too large"), std::string::npos);
}

TEST(DurationArg, GetDurationFromParsedArgs) {
  ParsedArgs args;
  std::vector<std::string> notes;
  auto none = GetDuration(args, kWasMs, notes);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  args.values["timeout"] = "2500";
  auto given = GetDuration(args, kWasMs, notes);
  ASSERT_TRUE(given);
  EXPECT_EQ(**given, milliseconds(2500));
  ASSERT_EQ(notes.size(), 1u);
  args.values["timeout"] = "x";
  EXPECT_FALSE(GetDuration(args, kWasMs, notes));
}

TEST(DurationArg, FormatSeconds) {
  EXPECT_EQ(FormatSeconds(seconds(600)), "600 s");
  EXPECT_EQ(FormatSeconds(milliseconds(10)), "0.01 s");
  EXPECT_EQ(FormatSeconds(nanoseconds(1)), "0.000000001 s");
}

}  // namespace
}  // namespace qpconnect::tools
