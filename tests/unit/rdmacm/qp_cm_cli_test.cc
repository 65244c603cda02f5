// SPDX-License-Identifier: MIT
// qp-cm's command line (tools/qp-cm): what it sets for PROGRAM, and the
// refusals of a bad option, each naming what was wrong.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run.h"

namespace qpconnect::tools::qp_cm {
namespace {

class QpCmCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("qp_cm_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "compat");
    std::ofstream(dir_ / "libqpcm.so") << "x";
    std::filesystem::create_symlink("../libqpcm.so", dir_ / "compat" / "librdmacm.so.1");
    ctx_.library_override = (dir_ / "libqpcm.so").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Env(const Launch& l, const std::string& name) {
    for (const auto& [k, v] : l.env)
      if (k == name) return v;
    return "<unset>";
  }

  std::filesystem::path dir_;
  LaunchContext ctx_;
};

TEST_F(QpCmCli, PreloadsTheLibraryAndPassesTheMapAndProgram) {
  ctx_.ld_preload = "/other.so";
  ctx_.devices = "10.0.0.9=mlx5_0";
  auto l = PrepareLaunch({"--devices", "10.77.0.1=rxe0:1:0,10.77.0.2=rxe1:1", "--timeout", "2.5",
                          "--", "rping", "-s", "-a", "10.77.0.1"},
                         ctx_);
  ASSERT_TRUE(l) << l.error().ToString();
  EXPECT_TRUE(l->notes.empty());
  EXPECT_EQ(l->argv, (std::vector<std::string>{"rping", "-s", "-a", "10.77.0.1"}));
  EXPECT_EQ(Env(*l, "LD_PRELOAD"), (dir_ / "libqpcm.so").string() + ":/other.so");
  EXPECT_EQ(Env(*l, "QPCM_DEVICES"), "10.77.0.1=rxe0:1:0,10.77.0.2=rxe1:1,10.0.0.9=mlx5_0");
  EXPECT_EQ(Env(*l, "QPCM_TIMEOUT_MS"), "2500");
  EXPECT_EQ(Env(*l, "LD_LIBRARY_PATH"), "<unset>");
}

TEST_F(QpCmCli, TakesEverySpellingOfAnAddressTheLibraryReads) {
  // Issue 39: IPv4-mapped, IPv6 in capitals or brackets, link-local scopes.
  const std::string map =
      "::ffff:10.77.0.1=rxe0,FD77:0::1=rxe0:1,[fd77::2]=rxe1:1,fe80::1%lo=rxe0,fe80::2%1=rxe1";
  auto l = PrepareLaunch({"--devices", map, "--", "rping", "-s"}, ctx_);
  ASSERT_TRUE(l) << l.error().ToString();
  EXPECT_EQ(Env(*l, "QPCM_DEVICES"), map);
}

TEST_F(QpCmCli, LibraryPathModePutsTheCompatDirectoryFirst) {
  ctx_.ld_library_path = "/usr/local/lib";
  auto l = PrepareLaunch({"--mode", "library-path", "cmtime", "-s", "10.77.0.1"}, ctx_);
  ASSERT_TRUE(l) << l.error().ToString();
  EXPECT_EQ(Env(*l, "LD_LIBRARY_PATH"), (dir_ / "compat").string() + ":/usr/local/lib");
  EXPECT_EQ(Env(*l, "LD_PRELOAD"), "<unset>");
  EXPECT_EQ(l->argv.front(), "cmtime");
}

TEST_F(QpCmCli, RefusesWhatItCannotUseNamingIt) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"rping"}, ""},  // the only good one
      {{}, "missing the PROGRAM"},
      {{"--devices", "10.77.0.1", "rping"}, "not ADDR=DEV"},
      {{"--devices", "host=rxe0", "rping"}, "not an IPv4 or IPv6 address"},
      {{"--devices", "10.77.0.1=rxe0:0", "rping"}, "port of 10.77.0.1"},
      {{"--devices", "10.77.0.1=:1", "rping"}, "no device name"},
      {{"--devices", "10.77.0.1=rxe0:1:300", "rping"}, "GID index of 10.77.0.1"},
      {{"--mode", "ld", "rping"}, "preload or library-path"},
      {{"--timeout", "0", "rping"}, "--timeout"},
      {{"--timeout", "-1", "rping"}, "--timeout: '-1' is negative"},
      {{"--timeout", "2 s", "rping"}, "--timeout: '2 s': unknown unit"},
      {{"--timeout", "2h", "rping"}, "out of range [0.001 s, 3600 s]"},
      {{"--config", "/nonexistent/qpcm.conf", "rping"}, "cannot read"},
      {{"--bogus", "rping"}, "bogus"},
  };
  for (const Case& c : cases) {
    auto l = PrepareLaunch(c.args, ctx_);
    if (c.says.empty()) {
      EXPECT_TRUE(l);
      continue;
    }
    ASSERT_FALSE(l) << c.says;
    EXPECT_NE(l.error().ToString().find(c.says), std::string::npos) << l.error().ToString();
  }
}

// Before issue 40: -D, -l, -t, -m, and --timeout in milliseconds. Still read,
// each with a note; a duration with a fraction of a millisecond rounds up.
TEST_F(QpCmCli, OldSpellingsStillWorkWithNotes) {
  auto l = PrepareLaunch({"-D", "10.77.0.1=rxe0", "-l", "qpcm.log", "-t", "2500", "-m", "preload",
                          "--", "rping", "-s"},
                         ctx_);
  ASSERT_TRUE(l) << l.error().ToString();
  EXPECT_EQ(Env(*l, "QPCM_DEVICES"), "10.77.0.1=rxe0");
  EXPECT_EQ(Env(*l, "QPCM_LOG"), std::filesystem::absolute("qpcm.log").string());
  EXPECT_EQ(Env(*l, "QPCM_TIMEOUT_MS"), "2500");
  EXPECT_EQ(l->argv, (std::vector<std::string>{"rping", "-s"}));
  ASSERT_EQ(l->notes.size(), 5u);
  EXPECT_NE(l->notes[0].find("-D is deprecated"), std::string::npos) << l->notes[0];
  EXPECT_NE(l->notes[4].find("--timeout 2500 is read as milliseconds"), std::string::npos);
  auto fine = PrepareLaunch({"--timeout", "0.0015", "rping"}, ctx_);
  ASSERT_TRUE(fine) << fine.error().ToString();
  EXPECT_EQ(Env(*fine, "QPCM_TIMEOUT_MS"), "2");
  auto unit = PrepareLaunch({"--timeout", "500ms", "rping"}, ctx_);
  ASSERT_TRUE(unit);
  EXPECT_EQ(Env(*unit, "QPCM_TIMEOUT_MS"), "500");
  // The notes reach stderr before the exec (which fails here: no program).
  // The exec sets its variables in this process first: put them back.
  const char* preload = std::getenv("LD_PRELOAD");
  const std::string saved = preload != nullptr ? preload : "";
  ::setenv("QPCM_LIBRARY", ctx_.library_override.c_str(), 1);
  std::ostringstream out, err;
  EXPECT_EQ(qp_cm::Run({"-t", "2500", "/nonexistent/program"}, out, err), 127);
  EXPECT_NE(err.str().find("qp-cm: -t is deprecated"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("qp-cm: --timeout 2500 is read as milliseconds"), std::string::npos);
  ::unsetenv("QPCM_LIBRARY");
  ::unsetenv("QPCM_TIMEOUT_MS");
  if (preload != nullptr) {
    ::setenv("LD_PRELOAD", saved.c_str(), 1);
  } else {
    ::unsetenv("LD_PRELOAD");
  }
}

TEST_F(QpCmCli, AMissingLibraryNamesWhereItLooked) {
  ctx_.library_override.clear();
  ctx_.self_dir = (dir_ / "bin").string();
  auto l = PrepareLaunch({"rping"}, ctx_);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, ErrorCode::kNotFound);
  EXPECT_NE(l.error().detail.find("QPCM_LIBRARY"), std::string::npos) << l.error().detail;
}

TEST_F(QpCmCli, RunExitsTwoOnABadCommandLineAndZeroForHelp) {
  std::ostringstream out, err;
  EXPECT_EQ(qp_cm::Run({"--mode", "x", "rping"}, out, err), 2);
  EXPECT_NE(err.str().find("Try 'qp-cm --help'"), std::string::npos);
  EXPECT_EQ(qp_cm::Run({"--help"}, out, err), 0);
  EXPECT_NE(out.str().find("Usage: qp-cm"), std::string::npos);
}

}  // namespace
}  // namespace qpconnect::tools::qp_cm
