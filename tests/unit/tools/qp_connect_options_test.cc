// SPDX-License-Identifier: MIT
// qp-connect's command line: defaults in the pingpong conventions, and every
// unusable combination refused with the option named.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "exit_codes.h"
#include "options.h"
#include "preflight.h"
#include "run.h"
#include "unit/tools/version_check.h"

namespace qpconnect::tools {
namespace {

using Args = std::vector<std::string>;

TEST(ConnectOptions, DefaultsFollowThePingpongConventions) {
  auto o = ParseConnectOptions({});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->oob, OobKind::kTcp);
  EXPECT_FALSE(o->client);  // no HOST: server
  EXPECT_EQ(o->tcp_port, 18515);
  EXPECT_EQ(o->session.transport, Transport::kRc);
  EXPECT_EQ(o->session.message_size, 4096u);
  EXPECT_EQ(o->session.port, 1);
  EXPECT_EQ(o->iters, 1000u);
  EXPECT_TRUE(o->validate);
  EXPECT_TRUE(o->verify);
  EXPECT_FALSE(o->session.mtu);  // negotiated
}

TEST(ConnectOptions, HostMakesTheClientAndUdShrinksTheDefaultSize) {
  auto o = ParseConnectOptions({"-t", "ud", "-d", "rxe1", "-g", "1", "10.99.0.1"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_TRUE(o->client);
  EXPECT_EQ(*o->host, "10.99.0.1");
  EXPECT_EQ(o->session.transport, Transport::kUd);
  EXPECT_EQ(o->session.message_size, 1024u);
  EXPECT_EQ(o->session.device, "rxe1");
  EXPECT_EQ(*o->session.gid.index, 1);
}

TEST(ConnectOptions, ForcedMtuIsAnnouncedAndPlanned) {
  auto o = ParseConnectOptions({"-m", "2048"});
  ASSERT_TRUE(o);
  // One knob: described as forced, which the plan follows (plan_test.cc).
  EXPECT_EQ(*o->session.mtu, Mtu::k2048);
}

TEST(ConnectOptions, TrafficClassAndFlowLabelReachTheSessionInRange) {
  auto o = ParseConnectOptions({"--tclass", "104", "--flow-label", "0x12345"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->session.traffic_class, 104);
  EXPECT_EQ(o->session.flow_label, 0x12345u);
  EXPECT_FALSE(ParseConnectOptions({"--tclass", "256"}));
  auto fl = ParseConnectOptions({"--flow-label", "0x100000"});
  ASSERT_FALSE(fl);
  EXPECT_NE(fl.error().detail.find("flow-label"), std::string::npos) << fl.error().detail;
}

TEST(ConnectOptions, RefusesUnusableCombinations) {
  const std::vector<std::vector<std::string>> bad = {
      {"--transport", "xrc"},
      {"-m", "1500"},
      {"-m", "8192"},
      {"--oob", "carrier-pigeon"},
      {"--oob", "file", "--role", "client"},           // no --oob-dir
      {"--oob", "file", "--oob-dir", "/tmp"},          // no --role
      {"--oob", "stdio", "--role", "client", "host"},  // HOST with stdio
      {"--role", "client"},                            // --role with tcp
      {"--psn", "0x1000000"},                          // 25 bits
      {"--qps", "0"},
      {"-s", "0"},
      {"a", "b"},  // two HOSTs
      {"--sl", "16"},
      {"--wire", "perftest"},
  };
  for (const auto& args : bad) {
    auto o = ParseConnectOptions(args);
    EXPECT_FALSE(o) << "accepted: " << ::testing::PrintToString(args);
    if (!o) {
      EXPECT_EQ(o.error().code, ErrorCode::kInvalidArgument);
    }
  }
}

TEST(ConnectRun, UsageErrorsExitTwoAndHelpExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(RunQpConnect({"--bogus"}, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--bogus"), std::string::npos);
  std::ostringstream out2, err2;
  EXPECT_EQ(RunQpConnect({"--help"}, out2, err2), kExitOk);
  EXPECT_NE(out2.str().find("Usage: qp-connect"), std::string::npos);
  EXPECT_NE(out2.str().find("Exit status"), std::string::npos);
}

TEST(ConnectOptions, VersionNamesToolProjectAndWireFormat) {
  ExpectVersionContract("qp-connect", RunQpConnect);
}

// Issue 11: the key file, the exchange directory and the bind address are
// checked before the device is opened, so their errors are usage errors
// (exit 2) naming them, not "no RDMA device" (exit 3).
TEST(ConnectRun, KeyDirectoryAndBindAreCheckedBeforeTheDevice) {
  char tmpl[] = "/tmp/qpc-cli-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string short_key = dir + "/short.key";
  { std::ofstream(short_key) << "fifteen bytes!!\n"; }
  ::chmod(short_key.c_str(), 0600);
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  };
  const Case cases[] = {
      {{"-d", "no-such-dev", "--psk-file", dir + "/missing.key"}, "load PSK file"},
      {{"-d", "no-such-dev", "--psk-file", short_key}, "at least 16"},
      {{"-d", "no-such-dev", "--oob", "file", "--role", "server", "--oob-dir", dir + "/none"},
       "open exchange directory"},
      {{"-d", "no-such-dev", "--bind", "no-such-host.invalid", "--port", "1"},
       "resolve bind address"},
  };
  for (const auto& c : cases) {
    std::ostringstream out, err;
    EXPECT_EQ(RunQpConnect(c.args, out, err), kExitUsage) << err.str();
    EXPECT_NE(err.str().find(c.needle), std::string::npos) << err.str();
    EXPECT_EQ(err.str().find("no-such-dev"), std::string::npos) << err.str();
  }
  std::filesystem::remove_all(dir);
}

// Issue 14: the exit-status rule. What the user typed and qp-connect can check
// without the device (the --dump file, the key file however it is unusable,
// a HOST or --bind that has no address) is a usage error, exit 2, found before
// the device is opened and before any exchange, in either wire dialect.
TEST(ConnectRun, InputsTheUserTypedAreUsageErrorsBeforeTheDeviceAndTheExchange) {
  char tmpl[] = "/tmp/qpc-cli-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  };
  const Case cases[] = {
      // A path through a regular file: open() fails with ENOTDIR (kIo), as an
      // unreadable file does for a user other than root.
      {{"-d", "no-such-dev", "--psk-file", "/etc/passwd/qpc.key"}, "load PSK file"},
      {{"-d", "no-such-dev", "--dump", dir + "/none/a.json"}, "open --dump"},
      {{"-d", "no-such-dev", "--timeout", "5", "no-such-host.invalid"},
       "resolve no-such-host.invalid"},
      {{"-d", "no-such-dev", "--timeout", "5", "--wire", "pingpong", "no-such-host.invalid"},
       "HOST 'no-such-host.invalid' has no address"},
      {{"-d", "no-such-dev", "--wire", "pingpong", "--bind", "no-such-host.invalid"},
       "--bind 'no-such-host.invalid' has no address"},
  };
  for (const auto& c : cases) {
    std::ostringstream out, err;
    EXPECT_EQ(RunQpConnect(c.args, out, err), kExitUsage)
        << ::testing::PrintToString(c.args) << ": " << err.str();
    EXPECT_NE(err.str().find(c.needle), std::string::npos) << err.str();
    EXPECT_EQ(err.str().find("no-such-dev"), std::string::npos) << err.str();
  }
  // The JSON report names the stage.
  std::ostringstream out, err;
  EXPECT_EQ(RunQpConnect({"--json", "-d", "no-such-dev", "--dump", dir + "/none/a.json"}, out, err),
            kExitUsage);
  EXPECT_NE(out.str().find("\"stage\": \"dump\""), std::string::npos) << out.str();
  std::filesystem::remove_all(dir);
}

TEST(ConnectRun, LiteralAddressesNeedNoResolver) {
  EXPECT_TRUE(CheckResolves("HOST", "10.99.0.1", false, std::chrono::seconds(5)));
  EXPECT_TRUE(CheckResolves("HOST", "[::1]", false, std::chrono::seconds(5)));
  EXPECT_TRUE(CheckResolves("--bind", "0.0.0.0", true, std::chrono::seconds(5)));
  auto bad = CheckResolves("HOST", "no-such-host.invalid", false, std::chrono::seconds(5));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().attribute, "HOST");
}

// Issue 14: buffers the host cannot allocate (--qps 3000 at a large --size)
// are not "a verbs call failed" (6) but a usage error naming the options; the
// other open failures keep their statuses.
TEST(ConnectRun, BuffersTheHostCannotGiveAreAUsageErrorNamingTheOptions) {
  Error nomem{ErrorCode::kIo, ENOMEM, "allocate buffers", "", "3221225472000 bytes"};
  EXPECT_EQ(ExitForOpen(nomem), kExitUsage);
  EXPECT_NE(nomem.detail.find("3221225472000 bytes"), std::string::npos) << nomem.detail;
  for (const char* option : {"--size", "--qps", "--rx-depth"}) {
    EXPECT_NE(nomem.detail.find(option), std::string::npos) << nomem.detail;
  }
  Error reg{ErrorCode::kVerbs, ENOMEM, "ibv_reg_mr", "", "ulimit -l"};
  EXPECT_EQ(ExitForOpen(reg), kExitVerbs);
  Error missing{ErrorCode::kNotFound, 0, "open device", "", "no-such-dev"};
  EXPECT_EQ(ExitForOpen(missing), kExitNoDevice);
  Error usage{ErrorCode::kInvalidArgument, 0, "size", "", "UD size above the MTU"};
  EXPECT_EQ(ExitForOpen(usage), kExitUsage);
}

// Issue 14: --role has no default: --help says it is required for file and
// stdio, and does not name a default.
TEST(ConnectOptions, HelpSaysRoleIsRequiredForFileAndStdio) {
  const std::string help = ConnectHelp();
  const auto at = help.find("--role");
  ASSERT_NE(at, std::string::npos);
  const std::string line = help.substr(at, help.find('\n', at) - at);
  EXPECT_NE(line.find("required"), std::string::npos) << line;
  EXPECT_EQ(line.find("(client)"), std::string::npos) << line;
  EXPECT_EQ(line.find("default"), std::string::npos) << line;
}

// Issue 18: --gen-psk writes a fresh 32-byte key, mode 0600, never over an
// existing file; the key it writes is accepted by --psk-file.
TEST(ConnectRun, GenPskWritesAFreshOwnerOnlyKeyOnce) {
  char tmpl[] = "/tmp/qpc-cli-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string key = std::string(tmpl) + "/qpc.key";
  std::ostringstream out, err;
  ASSERT_EQ(RunQpConnect({"--gen-psk", key}, out, err), kExitOk) << err.str();
  EXPECT_NE(out.str().find("32-byte key"), std::string::npos) << out.str();
  struct stat st {};
  ASSERT_EQ(::stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_size, 65);
  std::ostringstream out2, err2;
  EXPECT_EQ(RunQpConnect({"--gen-psk", key}, out2, err2), kExitUsage);
  EXPECT_NE(err2.str().find("refusing to overwrite"), std::string::npos) << err2.str();
  auto parsed = ParseConnectOptions({"--psk-file", key});
  ASSERT_TRUE(parsed);
  std::filesystem::remove_all(tmpl);
}

// Issue 14: HOST with a port, as users type it.
TEST(ConnectOptions, HostTakesAPortAndBracketsAnIpv6Address) {
  struct Case {
    std::string arg;
    std::string host;
    uint16_t port;
  };
  for (const Case& c : std::vector<Case>{{"hostA", "hostA", 18515},
                                         {"hostA:7000", "hostA", 7000},
                                         {"10.0.0.1:7001", "10.0.0.1", 7001},
                                         {"fe80::1", "fe80::1", 18515},
                                         {"[fe80::1%eth0]", "fe80::1%eth0", 18515},
                                         {"[fe80::1]:7002", "fe80::1", 7002}}) {
    auto o = ParseConnectOptions({c.arg});
    ASSERT_TRUE(o) << c.arg << ": " << o.error().ToString();
    EXPECT_EQ(o->host, c.host) << c.arg;
    EXPECT_EQ(o->tcp_port, c.port) << c.arg;
    EXPECT_TRUE(o->client) << c.arg;
  }
  // The same port twice is fine; two different ones, or a bad one, are not.
  auto same = ParseConnectOptions({"-p", "7000", "hostA:7000"});
  ASSERT_TRUE(same) << same.error().ToString();
  for (const Args& bad : std::vector<Args>{{"-p", "7000", "hostA:7001"},
                                           {"hostA:"},
                                           {"hostA:0"},
                                           {"hostA:http"},
                                           {":7000"},
                                           {"[fe80::1"},
                                           {"[fe80::1]7000"}}) {
    auto o = ParseConnectOptions(bad);
    ASSERT_FALSE(o) << bad.back();
    EXPECT_EQ(o.error().code, ErrorCode::kInvalidArgument) << bad.back();
    EXPECT_NE(o.error().detail.find(bad.back()), std::string::npos) << o.error().detail;
  }
}

// Issue 14: the short options RDMA users type from other tools: -x (perftest's
// GID index) as -g, -l (ibv_rc_pingpong's SL). Issue 40: -l is qp-info's
// --list in every tool, so -l for --sl is deprecated: still read, with a
// note, and no longer in --help.
TEST(ConnectOptions, PerftestAndPingpongShortOptionsWork) {
  auto o = ParseConnectOptions({"-x", "3", "-l", "5", "hostA"});
  ASSERT_TRUE(o) << o.error().ToString();
  ASSERT_TRUE(o->session.gid.index.has_value());
  EXPECT_EQ(*o->session.gid.index, 3);
  EXPECT_EQ(o->session.sl, 5);
  EXPECT_TRUE(o->sl_given);
  ASSERT_EQ(o->notes.size(), 1u);
  EXPECT_NE(o->notes[0].find("-l is deprecated"), std::string::npos) << o->notes[0];
  EXPECT_NE(o->notes[0].find("write --sl"), std::string::npos) << o->notes[0];
  EXPECT_NE(ConnectHelp().find("-g, -x, --gid-idx"), std::string::npos) << ConnectHelp();
  EXPECT_NE(ConnectHelp().find("      --sl SL"), std::string::npos) << ConnectHelp();
  EXPECT_EQ(ConnectHelp().find("-l, --sl"), std::string::npos);
  auto modern = ParseConnectOptions({"--sl", "5", "hostA"});
  ASSERT_TRUE(modern);
  EXPECT_TRUE(modern->notes.empty());
}

// Issue 40: --timeout and -D take durations (duration_arg.h): fractions and
// units; qp-connect's were seconds before, so a bare 3000 is 3000 s.
TEST(ConnectOptions, TimeoutAndDurationTakeDurations) {
  auto o = ParseConnectOptions({"--timeout", "1.5", "-D", "2m", "hostA"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->timeout, std::chrono::milliseconds(1500));
  ASSERT_TRUE(o->duration);
  EXPECT_EQ(*o->duration, std::chrono::minutes(2));
  EXPECT_TRUE(o->notes.empty());
  auto bare = ParseConnectOptions({"--timeout", "3000", "hostA"});
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->timeout, std::chrono::seconds(3000));
  EXPECT_TRUE(bare->notes.empty());
  auto ms = ParseConnectOptions({"--timeout", "2500ms", "hostA"});
  ASSERT_TRUE(ms);
  EXPECT_EQ(ms->timeout, std::chrono::milliseconds(2500));
  for (const Args& bad : {Args{"--timeout", "500ms"}, Args{"--timeout", "25h"},
                          Args{"--timeout", "-1"}, Args{"-D", "0.5"}}) {
    auto r = ParseConnectOptions(bad);
    ASSERT_FALSE(r) << bad[1];
    EXPECT_NE(r.error().detail.find("'" + bad[1] + "'"), std::string::npos) << r.error().detail;
  }
}

// Issue 14: the perftest-grade report's options: -D, -a, --report-gbits,
// and every combination that cannot run refused as a usage error (exit 2)
// before the device is opened.
TEST(ConnectOptions, DurationSweepAndGbitsParse) {
  auto o = ParseConnectOptions({"-D", "5", "-a", "--report-gbits", "-e", "-s", "1024", "hostA"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_TRUE(o->session.completion_events);
  ASSERT_TRUE(o->duration.has_value());
  EXPECT_EQ(*o->duration, std::chrono::seconds(5));
  EXPECT_TRUE(o->sweep);
  EXPECT_TRUE(o->report_gbits);
  auto d = ParseConnectOptions({});
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->duration);
  EXPECT_FALSE(d->sweep);
  EXPECT_FALSE(d->report_gbits);
  EXPECT_FALSE(d->session.completion_events);
  EXPECT_NE(ConnectHelp().find("-D, --duration"), std::string::npos) << ConnectHelp();
  EXPECT_NE(ConnectHelp().find("-a, --all"), std::string::npos);
  EXPECT_NE(ConnectHelp().find("--report-gbits"), std::string::npos);
  EXPECT_NE(ConnectHelp().find("-e, --events"), std::string::npos);
}

// `args` are refused by the parser (kInvalidArgument naming `needle`), and
// qp-connect exits 2 on them before it opens the device.
void ExpectUsageErrorBeforeTheDevice(const Args& args, const std::string& needle) {
  auto o = ParseConnectOptions(args);
  ASSERT_FALSE(o) << ::testing::PrintToString(args);
  EXPECT_EQ(o.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(o.error().detail.find(needle), std::string::npos) << o.error().detail;
  std::ostringstream out, err;
  Args with_dev = args;
  with_dev.insert(with_dev.begin(), {"-d", "no-such-dev"});
  EXPECT_EQ(RunQpConnect(with_dev, out, err), kExitUsage) << err.str();
  EXPECT_EQ(err.str().find("no-such-dev"), std::string::npos) << err.str();
}

TEST(ConnectOptions, ReportOptionsThatCannotRunAreUsageErrors) {
  struct Case {
    Args args;
    const char* needle;
  };
  const Case cases[] = {
      {{"-D", "2", "-n", "10"}, "exclude each other"},
      {{"-D", "0"}, "--duration"},
      {{"-D", "86401"}, "--duration"},
      {{"-D", "two"}, "--duration"},
      {{"-a", "-s", "1"}, "below 2"},
      {{"--wire", "pingpong", "-D", "2", "hostA"}, "-D is for --wire qpc"},
      {{"--wire", "pingpong", "-a", "hostA"}, "-a is for --wire qpc"},
      {{"--no-verify", "-D", "2"}, "--no-verify"},
      {{"--no-verify", "-a"}, "--no-verify"},
      {{"--no-verify", "--report-gbits"}, "--no-verify"},
      {{"--no-verify", "-e"}, "--no-verify"},
  };
  for (const auto& c : cases) ExpectUsageErrorBeforeTheDevice(c.args, c.needle);
}

// Issue 14, a serving mode: --serve, and --count N which implies it.
TEST(ConnectOptions, ServeAndCountParse) {
  auto o = ParseConnectOptions({"--serve"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_TRUE(o->serve);
  EXPECT_FALSE(o->count);
  o = ParseConnectOptions({"--count", "3"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_TRUE(o->serve);
  ASSERT_TRUE(o->count);
  EXPECT_EQ(*o->count, 3u);
  o = ParseConnectOptions({});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_FALSE(o->serve);
  EXPECT_FALSE(ParseConnectOptions({"--count", "0"}));
  const std::string help = ConnectHelp();
  EXPECT_NE(help.find("--serve"), std::string::npos);
  EXPECT_NE(help.find("  130  interrupted by SIGINT (128 + 2)\n"), std::string::npos) << help;
  EXPECT_NE(help.find("  143  interrupted by SIGTERM (128 + 15)\n"), std::string::npos);
  EXPECT_NE(help.find("  10   the verification packets were lost"), std::string::npos);
}

// Serving is for the tcp server: anything else is a usage error (exit 2)
// naming the option, before the device is opened.
TEST(ConnectOptions, ServeOutsideTheTcpServerIsAUsageError) {
  struct Case {
    Args args;
    std::string needle;
  };
  const Case cases[] = {
      {{"--serve", "10.99.0.1"}, "--serve is for the tcp server"},
      {{"--count", "2", "10.99.0.1"}, "--count is for the tcp server"},
      {{"--serve", "--oob", "file", "--oob-dir", "/tmp", "--role", "server"}, "--oob tcp"},
      {{"--serve", "--oob", "stdio", "--role", "server"}, "--oob tcp"},
      {{"--serve", "--wire", "pingpong"}, "--wire qpc"},
      {{"--count", "2", "--dump", "/tmp/a.json"}, "--dump"},
  };
  for (const auto& c : cases) ExpectUsageErrorBeforeTheDevice(c.args, c.needle);
}

// A server that cannot serve anyone (no such device) stops at once with that
// status instead of trying again for the next peer.
TEST(ConnectRun, ServeStopsWhenThisSideCannotServeAnyone) {
  std::ostringstream out, err;
  EXPECT_EQ(RunQpConnect({"--serve", "-d", "no-such-dev", "-p", "18599"}, out, err), kExitNoDevice)
      << err.str();
  EXPECT_NE(err.str().find("peer 1: open failed"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace qpconnect::tools
