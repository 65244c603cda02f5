// SPDX-License-Identifier: MIT
// libqptrace.so and qp-trace without a device: trace_probe, linked against a
// fake libibverbs (preload/fake_ibverbs.cc), runs under the preload. The
// probe checks that every call returns what the fake returns with errno
// untouched; these tests check what the trace holds, that recording failures
// leave the program alone, and qp-trace's command line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "qpconnect/observe/trace_reader.h"
#include "run.h"

namespace qpconnect::tools {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory for one test's traces, removed when the test ends.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : dir_(fs::path(testing::TempDir()) / ("qptrace_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  operator const fs::path&() const { return dir_; }  // NOLINT: stands for its path
  fs::path operator/(const std::string& name) const { return dir_ / name; }

 private:
  fs::path dir_;
};

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `command` through the shell, its output captured in `dir`.
Ran Shell(const fs::path& dir, const std::string& command) {
  const fs::path out = dir / "stdout.txt";
  const fs::path err = dir / "stderr.txt";
  const std::string line = command + " >" + out.string() + " 2>" + err.string();
  const int st = std::system(line.c_str());
  Ran r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

std::string Preloaded(const fs::path& pattern, const std::string& mode) {
  return "LD_PRELOAD=" + std::string(QPC_PRELOAD) + " QP_TRACE_FILE=" + pattern.string() + " " +
         QPC_PROBE + " " + mode;
}

std::vector<fs::path> Traces(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("t.", 0) == 0) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Observation ReadAll(const std::vector<fs::path>& files) {
  Observation o;
  for (const fs::path& f : files) {
    Result<trace::TraceHeader> r = trace::ReadTrace(Slurp(f), f.filename().string(), o);
    EXPECT_TRUE(r) << f << ": " << (r ? "" : r.error().detail);
  }
  return o;
}

TEST(Preload, ForwardsEveryCallAndRecordsTheTransitions) {
  const Scratch dir("basic");
  const Ran r = Shell(dir, Preloaded(dir / "t.%p.json", "basic"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "probe ok\n");
  EXPECT_EQ(r.err, "");
  const std::vector<fs::path> files = Traces(dir);
  ASSERT_EQ(files.size(), 1u);
  Observation o = ReadAll(files);
  ASSERT_EQ(o.qps.size(), 2u);
  const ObservedQp& rc = o.qps[0];
  EXPECT_EQ(rc.device, "fake0");
  EXPECT_EQ(rc.comm, "trace_probe");
  EXPECT_EQ(rc.transport, Transport::kRc);
  EXPECT_FALSE(rc.creation_unseen);
  EXPECT_TRUE(rc.destroyed);
  EXPECT_EQ(rc.state, "RTS");
  ASSERT_EQ(rc.transitions.size(), 4u);
  EXPECT_EQ(rc.transitions[1].to, "RTR");
  EXPECT_EQ(rc.transitions[1].result, 22);
  EXPECT_EQ(rc.transitions[1].sys_errno, 22);
  EXPECT_EQ(rc.transitions[1].attrs.path_mtu, Mtu::k4096);
  EXPECT_EQ(rc.transitions[2].from, "INIT");
  EXPECT_EQ(rc.transitions[2].result, 0);
  EXPECT_EQ(rc.dest_qpn, 0x123u);
  EXPECT_EQ(rc.applied->path_mtu, Mtu::k1024);
  EXPECT_EQ(rc.endpoint->keys.pkey, 0xffff);
  EXPECT_EQ(rc.endpoint->rd_atomic.device_max_qp_rd_atom, 16u);
  const ObservedQp& ud = o.qps[1];
  EXPECT_EQ(ud.transport, Transport::kUd);
  ASSERT_EQ(ud.address_handles.size(), 1u);
  EXPECT_EQ(ud.address_handles[0].dgid[15], 3);
  // The failed create is a note; the fake's device has no port op.
  const std::string text = Slurp(files[0]);
  EXPECT_NE(text.find(R"("event":"create_qp")"), std::string::npos);
  EXPECT_NE(text.find(R"("errno":12)"), std::string::npos);
  EXPECT_NE(text.find(R"("event":"gid","t")"), std::string::npos);
  EXPECT_NE(text.find(R"("event":"end")"), std::string::npos);
}

TEST(Preload, GoesOnUntracedAndSaysSoOnceWhenItCannotWrite) {
  const Scratch dir("unwritable");
  const Ran r = Shell(dir, Preloaded("/nonexistent-qptrace-dir/t.%p.json", "basic"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "probe ok\n");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("qp-trace: cannot create the trace file /nonexistent-qptrace-dir/t.", 0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("(the program goes on)"), std::string::npos);
}

TEST(Preload, NeverWritesIntoADescriptorTheProgramTookOver) {
  const Scratch dir("closefds");
  const Ran r = Shell(dir, Preloaded(dir / "t.%p.json", "closefds"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "probe ok\n");
  EXPECT_NE(r.err.find("the program closed the trace file's descriptor"), std::string::npos)
      << r.err;
  // What was recorded before stays readable.
  const Observation o = ReadAll(Traces(dir));
  EXPECT_EQ(o.qps.size(), 1u);
}

TEST(Preload, WritesOneFilePerProcessAcrossFork) {
  const Scratch dir("fork");
  const Ran r = Shell(dir, Preloaded(dir / "t.%p.json", "fork"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "probe ok\n");
  const std::vector<fs::path> files = Traces(dir);
  ASSERT_EQ(files.size(), 2u);
  for (const fs::path& f : files) {
    Observation o = ReadAll({f});
    EXPECT_EQ(o.qps.size(), 2u) << f;
    // The probe's deliberately failed create; no "no end record": both ended.
    ASSERT_EQ(o.notes.size(), 1u) << f;
    EXPECT_NE(o.notes[0].find("ibv_create_qp (UD on fake0) failed with errno 12"),
              std::string::npos);
  }
}

TEST(Preload, AppendsThePidForAChildWhenThePatternHasNone) {
  const Scratch dir("nopid");
  // As qp-trace does: QP_TRACE_PID is the pid the program keeps across exec.
  const Ran r = Shell(dir, "exec env QP_TRACE_PID=$$ " + Preloaded(dir / "t.json", "fork"));
  EXPECT_EQ(r.status, 0);
  const std::vector<fs::path> files = Traces(dir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].filename(), "t.json");                         // the program itself
  EXPECT_EQ(files[1].filename().string().rfind("t.json.", 0), 0u);  // its child
}

TEST(Preload, RecordsEveryThreadsCallsAsWholeLines) {
  const Scratch dir("threads");
  const Ran r = Shell(dir, Preloaded(dir / "t.%p.json", "threads"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "probe ok\n");
  const Observation o = ReadAll(Traces(dir));
  ASSERT_EQ(o.qps.size(), 200u);
  for (const ObservedQp& q : o.qps) {
    EXPECT_EQ(q.transitions.size(), 3u);
    EXPECT_TRUE(q.destroyed);
  }
}

TEST(QpTrace, RunsTheProgramWithItsArgumentsAndExitStatus) {
  const Scratch dir("cli");
  const Ran r = Shell(dir, std::string(QPC_QP_TRACE) + " -o " + (dir / "t.%p.json").string() +
                               " -- " + QPC_PROBE + " basic 3");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "probe ok\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(ReadAll(Traces(dir)).qps.size(), 2u);
}

TEST(QpTrace, ReportsAProgramThatIsNotThere) {
  const Scratch dir("missing");
  const Ran r = Shell(dir, std::string(QPC_QP_TRACE) + " -- /nonexistent/program");
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("qp-trace: /nonexistent/program: No such file"), std::string::npos);
}

qp_trace::LaunchContext Context() {
  qp_trace::LaunchContext c;
  c.cwd = testing::TempDir();
  c.self_dir = fs::path(QPC_QP_TRACE).parent_path().string();
  c.pid = 4242;
  return c;
}

TEST(QpTraceLaunch, LeavesOptionsAfterTheProgramToTheProgram) {
  Result<qp_trace::Launch> l =
      qp_trace::PrepareLaunch({"-o", "x.%p.json", "prog", "-o", "y", "--", "z"}, Context());
  ASSERT_TRUE(l) << l.error().detail;
  EXPECT_EQ(l->argv, (std::vector<std::string>{"prog", "-o", "y", "--", "z"}));
  ASSERT_EQ(l->env.size(), 3u);
  EXPECT_EQ(l->env[0].first, "LD_PRELOAD");
  EXPECT_EQ(fs::path(l->env[0].second).filename(), "libqptrace.so");
  EXPECT_EQ(l->env[1],
            (std::pair<std::string, std::string>{
                "QP_TRACE_FILE",
                (fs::path(testing::TempDir()) / "x.%p.json").lexically_normal().string()}));
  EXPECT_EQ(l->env[2], (std::pair<std::string, std::string>{"QP_TRACE_PID", "4242"}));
}

TEST(QpTraceLaunch, TakesTheProgramAfterDoubleDash) {
  Result<qp_trace::Launch> l = qp_trace::PrepareLaunch({"--", "-weird-name", "a"}, Context());
  ASSERT_TRUE(l) << l.error().detail;
  EXPECT_EQ(l->argv, (std::vector<std::string>{"-weird-name", "a"}));
  EXPECT_NE(l->env[1].second.find("qp-trace.%p.json"), std::string::npos);
}

TEST(QpTraceLaunch, KeepsTheCallersPreloadsAfterItsOwn) {
  qp_trace::LaunchContext c = Context();
  c.existing_ld_preload = "/lib/other.so";
  Result<qp_trace::Launch> l = qp_trace::PrepareLaunch({"prog"}, c);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->env[0].second, std::string(QPC_PRELOAD) + ":/lib/other.so");
}

TEST(QpTraceLaunch, RefusesBadCommandLines) {
  EXPECT_EQ(qp_trace::PrepareLaunch({}, Context()).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(qp_trace::PrepareLaunch({"-o"}, Context()).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(qp_trace::PrepareLaunch({"-x", "prog"}, Context()).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      qp_trace::PrepareLaunch({"-o", "/nonexistent-dir/t.json", "prog"}, Context()).error().code,
      ErrorCode::kIo);
}

TEST(QpTraceLaunch, SaysWhereThePreloadWasLookedFor) {
  qp_trace::LaunchContext c = Context();
  c.self_dir = "/nonexistent/bin";
  Result<qp_trace::Launch> l = qp_trace::PrepareLaunch({"prog"}, c);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, ErrorCode::kNotFound);
  EXPECT_NE(l.error().detail.find("QP_TRACE_PRELOAD"), std::string::npos);
  c.preload_override = "/nonexistent/libqptrace.so";
  EXPECT_EQ(qp_trace::PrepareLaunch({"prog"}, c).error().code, ErrorCode::kNotFound);
}

TEST(QpTraceLaunch, HelpAndVersionRunNothing) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(qp_trace::Run({"--help"}, out, err), 0);
  EXPECT_NE(out.str().find("Usage: qp-trace [-o FILE] [--] PROGRAM [ARGS...]"), std::string::npos);
  out.str("");
  EXPECT_EQ(qp_trace::Run({"--version"}, out, err), 0);
  EXPECT_EQ(out.str().rfind("qp-trace (qpconnect) ", 0), 0u);
  EXPECT_EQ(qp_trace::Run({"--bogus"}, out, err), 2);
}

}  // namespace
}  // namespace qpconnect::tools
