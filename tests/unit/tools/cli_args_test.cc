// SPDX-License-Identifier: MIT
// The tools' option parser (tools/common/cli_args.h) on CLI11: the GNU forms
// the tools document, the errors naming the option, and what the library
// changed against the hand-written parser it replaced (cli_args.cc's header).
#include "cli_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace qpconnect::tools {
namespace {

const std::vector<OptionSpec>& Specs() {
  static const std::vector<OptionSpec> specs = {
      {'d', "ib-dev", true, "NAME", "device"},     {'g', "gid-idx", true, "INDEX", "gid", "x"},
      {0, "timeout", true, "SECONDS", "deadline"}, {0, "json", false, "", "json"},
      {'v', "verbose", false, "", "verbose"},      {'h', "help", false, "", "help"},
  };
  return specs;
}

std::string DetailOf(const std::vector<std::string>& args) {
  auto r = ParseArgs(args, Specs());
  EXPECT_FALSE(r) << "parsed";
  if (r) return "";
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  return r.error().detail;
}

TEST(CliArgs, AcceptsTheFourGnuFormsOfAValue) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-d", "rxe0"}, {"-drxe0"}, {"--ib-dev", "rxe0"}, {"--ib-dev=rxe0"}}) {
    auto p = ParseArgs(args, Specs());
    ASSERT_TRUE(p) << args[0] << ": " << p.error().ToString();
    EXPECT_EQ(p->Get("ib-dev"), "rxe0") << args[0];
    EXPECT_TRUE(p->positionals.empty()) << args[0];
  }
}

TEST(CliArgs, LastValueWinsAcrossAllNamesOfAnOption) {
  auto p = ParseArgs({"-g", "1", "--gid-idx=2", "-x3"}, Specs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->Get("gid-idx"), "3");
  auto q = ParseArgs({"-x", "3", "-g1"}, Specs());
  ASSERT_TRUE(q);
  EXPECT_EQ(q->Get("gid-idx"), "1");
}

TEST(CliArgs, KeepsPositionalsInOrderAmongOptionsAndAfterDoubleDash) {
  auto p = ParseArgs({"a", "--json", "b", "-d", "rxe1", "c", "--", "-v", "--json", "-"}, Specs());
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(p->positionals, (std::vector<std::string>{"a", "b", "c", "-v", "--json", "-"}));
  EXPECT_TRUE(p->Has("json"));
  EXPECT_FALSE(p->Has("verbose"));
  EXPECT_EQ(p->Get("ib-dev"), "rxe1");
  EXPECT_EQ(p->Get("timeout"), std::nullopt);
  auto q = ParseArgs({"--", "--", ""}, Specs());
  ASSERT_TRUE(q) << q.error().ToString();
  EXPECT_EQ(q->positionals, (std::vector<std::string>{"--", ""}));
}

TEST(CliArgs, FlagsHaveAnEmptyValueAndRepeatFreely) {
  auto p = ParseArgs({"--json", "-v", "--json"}, Specs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->Get("json"), "");
  EXPECT_EQ(p->Get("verbose"), "");
}

TEST(CliArgs, TakesTheArgumentAfterAnOptionVerbatimAsGetoptDoes) {
  auto p = ParseArgs({"--ib-dev", "--json", "-d", "-v"}, Specs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->Get("ib-dev"), "-v");
  EXPECT_FALSE(p->Has("json"));
  EXPECT_FALSE(p->Has("verbose"));
  auto q = ParseArgs({"--timeout", "--"}, Specs());
  ASSERT_TRUE(q);
  EXPECT_EQ(q->Get("timeout"), "--");
  // "--" as a value does not end the options: "-v" after it is still one.
  auto r = ParseArgs({"--timeout", "--", "-v", "x"}, Specs());
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->Get("timeout"), "--");
  EXPECT_TRUE(r->Has("verbose"));
  EXPECT_EQ(r->positionals, (std::vector<std::string>{"x"}));
}

TEST(CliArgs, NamesTheUnknownOption) {
  EXPECT_EQ(DetailOf({"--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(DetailOf({"host", "--bogus=1"}), "unknown option '--bogus'");
  EXPECT_EQ(DetailOf({"-z"}), "unknown option '-z'");
  EXPECT_EQ(DetailOf({"-zrxe0"}), "unknown option '-z'");
}

TEST(CliArgs, NamesTheOptionMissingItsValue) {
  EXPECT_EQ(DetailOf({"--ib-dev"}), "option '--ib-dev' needs a value (NAME)");
  EXPECT_EQ(DetailOf({"--json", "-d"}), "option '--ib-dev' needs a value (NAME)");
  EXPECT_EQ(DetailOf({"-x"}), "option '--gid-idx' needs a value (INDEX)");
  EXPECT_EQ(DetailOf({"--timeout"}), "option '--timeout' needs a value (SECONDS)");
}

TEST(CliArgs, RefusesAValueGivenToAFlag) {
  EXPECT_EQ(DetailOf({"--json=1"}), "option '--json' takes no value");
  EXPECT_EQ(DetailOf({"--verbose=no"}), "option '--verbose' takes no value");
}

// What CLI11 changed against the hand-written parser, kept on purpose.
TEST(CliArgs, GroupsShortFlagsAsGetoptDoes) {
  auto p = ParseArgs({"-vh"}, Specs());
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->Has("verbose"));
  EXPECT_TRUE(p->Has("help"));
  // A flag, then an option taking the rest as its value.
  auto q = ParseArgs({"-vdrxe0"}, Specs());
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->Has("verbose"));
  EXPECT_EQ(q->Get("ib-dev"), "rxe0");
  // An unknown letter in the group is named.
  EXPECT_EQ(DetailOf({"-vq"}), "unknown option '-q'");
}

TEST(CliArgs, ReadsANegativeNumberAsAPositional) {
  auto p = ParseArgs({"-1"}, Specs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->positionals, (std::vector<std::string>{"-1"}));
}

TEST(CliArgs, ReadsThreeDashesAsAPositional) {
  auto p = ParseArgs({"---x"}, Specs());
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(p->positionals, (std::vector<std::string>{"---x"}));
}

// `--ib-dev=` with nothing after '=' is CLI11's "no inline value": the next
// argument is the value, and at the end the value is missing (the
// hand-written parser gave the empty string).
TEST(CliArgs, ReadsAnEmptyInlineValueAsNoInlineValue) {
  auto p = ParseArgs({"--ib-dev=", "rxe0"}, Specs());
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(p->Get("ib-dev"), "rxe0");
  EXPECT_TRUE(p->positionals.empty());
  EXPECT_EQ(DetailOf({"--ib-dev="}), "option '--ib-dev' needs a value (NAME)");
}

TEST(CliArgs, AcceptsAFlagsOwnValueTrue) {
  auto p = ParseArgs({"--json=true"}, Specs());
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->Has("json"));
}

TEST(CliArgs, HasNoGlobalState) {
  ASSERT_TRUE(ParseArgs({"-d", "a"}, Specs()));
  auto p = ParseArgs({}, Specs());
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->values.empty());
  EXPECT_TRUE(p->positionals.empty());
}

TEST(CliArgs, ReportsAnOptionTableThatNamesAnOptionTwice) {
  const std::vector<OptionSpec> twice = {{'d', "ib-dev", true, "NAME", ""},
                                         {'d', "debug", false, "", ""}};
  auto p = ParseArgs({}, twice);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().operation, "option table");
  EXPECT_EQ(p.error().detail, "the option table names -d twice");
  const std::vector<OptionSpec> long_twice = {{'a', "same", false, "", ""},
                                              {'b', "same", false, "", ""}};
  auto q = ParseArgs({"-a"}, long_twice);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().detail, "the option table names --same twice");
}

TEST(CliArgs, FormatsHelpWithEveryShortName) {
  const std::string help = FormatOptions(Specs());
  EXPECT_NE(help.find("  -d, --ib-dev NAME"), std::string::npos) << help;
  EXPECT_NE(help.find("  -g, -x, --gid-idx INDEX"), std::string::npos) << help;
  EXPECT_NE(help.find("      --json"), std::string::npos) << help;
}

// A short name kept only for old command lines: read as its option, with a
// note, never shown in --help, the later of two spellings winning.
TEST(CliArgs, DeprecatedShortNameIsReadWithANoteAndHidden) {
  const std::vector<OptionSpec> specs = {
      {0, "sl", true, "SL", "service level", {}, "l"},
      {0, "log", true, "FILE", "log", {}, "L"},
      {'v', "verbose", false, "", "verbose"},
      {0, "quiet", false, "", "quiet", {}, "q"},
  };
  for (const auto& args : std::vector<std::vector<std::string>>{{"-l", "5"}, {"-l5"}}) {
    auto p = ParseArgs(args, specs);
    ASSERT_TRUE(p) << p.error().ToString();
    EXPECT_EQ(p->Get("sl"), "5");
    ASSERT_EQ(p->notes.size(), 1u);
    EXPECT_EQ(p->notes[0],
              "-l is deprecated (a short option means one thing in every qpconnect tool: "
              "docs/cli.md): write --sl");
  }
  auto grouped = ParseArgs({"-vq"}, specs);
  ASSERT_TRUE(grouped) << grouped.error().ToString();
  EXPECT_TRUE(grouped->Has("verbose"));
  EXPECT_TRUE(grouped->Has("quiet"));
  EXPECT_EQ(grouped->notes.size(), 1u);
  auto later_old = ParseArgs({"--sl", "1", "-l", "2"}, specs);
  ASSERT_TRUE(later_old);
  EXPECT_EQ(later_old->Get("sl"), "2");
  auto later_new = ParseArgs({"-l", "2", "--sl", "3"}, specs);
  ASSERT_TRUE(later_new);
  EXPECT_EQ(later_new->Get("sl"), "3");
  auto modern = ParseArgs({"--sl", "4"}, specs);
  ASSERT_TRUE(modern);
  EXPECT_TRUE(modern->notes.empty());
  const std::string help = FormatOptions(specs);
  EXPECT_EQ(help.find(" -l"), std::string::npos) << help;
  EXPECT_NE(help.find("      --sl SL"), std::string::npos) << help;
  // The table still refuses a deprecated letter that is another option's.
  const std::vector<OptionSpec> clash = {{'l', "list", false, "", ""},
                                         {0, "sl", true, "SL", "", {}, "l"}};
  auto c = ParseArgs({}, clash);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().detail, "the option table names -l twice");
}

}  // namespace
}  // namespace qpconnect::tools
