// SPDX-License-Identifier: MIT
// qp-inspect without a kernel: the CLI over a fake KernelReader (listing,
// filters, samples, snapshot file, what an empty or hidden view says, exit
// statuses), the netlink parsers over messages built with libmnl, and the
// /proc and sysfs readers over temporary trees.
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "qpconnect/observe/job_hosts.h"
#include "qpconnect/observe/netlink.h"
#include "qpconnect/observe/snapshot_json.h"
#include "qpconnect/observe/snapshot_text.h"
#include "run.h"
#include "unit/tools/version_check.h"

namespace qpconnect::tools::inspect {
namespace {

using namespace ::qpconnect::kernel;  // the netlink reader (qpconnect/observe/netlink.h)

KernelQp Qp(const std::string& dev, uint32_t lqpn, uint32_t rqpn, uint32_t sq, uint32_t rq, int pid,
            const std::string& comm, const std::string& pstate = "S") {
  KernelQp q;
  q.device = dev;
  q.port = 1;
  q.lqpn = lqpn;
  q.rqpn = rqpn;
  q.sq_psn = sq;
  q.rq_psn = rq;
  q.type = "RC";
  q.state = "RTS";
  q.pid = pid;
  q.comm = comm;
  q.process_state = pstate;
  return q;
}

KernelQp Gsi(const std::string& dev) {
  KernelQp q;
  q.device = dev;
  q.port = 1;
  q.lqpn = 1;
  q.sq_psn = 0;
  q.type = "GSI";
  q.state = "RTS";
  q.comm = "ib_core";
  return q;
}

// A kernel that shows a pingpong pair whose PSNs move by 100 per sample.
class FakeKernel : public KernelReader {
 public:
  std::vector<NlDevice> devices = {{1, "rxe0", 1}, {2, "rxe1", 1}};
  std::optional<Error> devices_error;
  std::optional<Error> sample_error;
  bool with_kernel_qps = true;
  bool with_user_qps = true;
  bool pids_withheld = false;  // as seen from another PID namespace
  int samples_taken = 0;

  Result<std::vector<NlDevice>> Devices() override {
    if (devices_error) return *devices_error;
    return devices;
  }
  Result<KernelSample> Sample(const std::vector<NlDevice>& devs,
                              std::vector<std::string>* notes) override {
    if (sample_error) return *sample_error;
    const uint32_t step = 100 * static_cast<uint32_t>(samples_taken++);
    KernelSample s;
    for (const NlDevice& d : devs) {
      if (with_kernel_qps) s.qps.push_back(Gsi(d.name));
      if (with_user_qps && d.name == "rxe0") {
        s.qps.push_back(Qp("rxe0", 17, 17, 1000 + step, 5000 + step, 811, "ibv_rc_pingpong"));
      }
      if (with_user_qps && d.name == "rxe1") {
        s.qps.push_back(Qp("rxe1", 17, 17, 5000 + step, 1000 + step, 812, "ibv_rc_pingpong"));
      }
      s.ports.push_back({d.name, 1, {{"sent_pkts", 10 + step}, {"duplicate_request", 0}}});
    }
    if (pids_withheld) {
      for (KernelQp& q : s.qps) {
        if (q.pid != 0) q = Qp(q.device, q.lqpn, 17, 1, 1, 0, "", "");
      }
    }
    if (samples_taken == 1) notes->push_back("a note from the reader");
    return s;
  }
};

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

struct Harness {
  FakeKernel kernel;
  double clock = 100;
  std::vector<double> sleeps;

  const inspect::Job* job = nullptr;
  bool wall = false;                           // give Run a wall clock: 1.8e9 s + the steady clock
  std::map<std::string, std::string> environ;  // what env.getenv answers

  Outcome Run(const std::vector<std::string>& args) {
    Environment env;
    env.job = job;
    if (wall) env.wall_seconds = [this] { return 1.8e9 + clock; };
    env.reader = &kernel;
    env.monotonic_seconds = [this] { return clock; };
    env.sleep = [this](double s) {
      sleeps.push_back(s);
      clock += s;
    };
    env.hostname = [] { return std::string("lab"); };
    env.getenv = [this](const char* name) {
      auto it = environ.find(name);
      return it == environ.end() ? std::string() : it->second;
    };
    env.utc_now = [] { return std::string("2026-11-23T05:20:00Z"); };
    std::ostringstream out, err;
    const int code = inspect::Run(args, env, out, err);
    return {code, out.str(), err.str()};
  }
};

std::string Temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("qpc_live_inspect_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(QpInspect, VersionAndHelpKeepTheContract) {
  ExpectVersionContract(
      "qp-inspect", [](const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
        Harness h;
        Environment env;
        env.reader = &h.kernel;
        return inspect::Run(args, env, out, err);
      });
}

TEST(QpInspect, ListsEveryQpWithPidCommandAndProcessState) {
  Harness h;
  const Outcome o = h.Run({});
  EXPECT_EQ(o.code, 0) << o.err;
  for (const char* s :
       {"4 QPs", "LQPN", "RQPN", "SQ-PSN", "RQ-PSN", "ibv_rc_pingpong", "811", "812", "[ib_core]",
        "GSI", "rxe1 port 1: sent_pkts 10", "note: a note from the reader"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
  EXPECT_EQ(o.out.find("+SQ"), std::string::npos) << "one sample has no movement";
  EXPECT_TRUE(h.sleeps.empty());
}

TEST(QpInspect, IntervalTakesTwoSamplesAndShowsMovement) {
  Harness h;
  const Outcome o = h.Run({"--interval", "0.5"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(h.sleeps, std::vector<double>{0.5});
  for (const char* s : {"2 samples 0.5 s apart", "+SQ", "+100", "sent_pkts 110 (+100)"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
}

// Issue 40: --interval and the +DURATION of --at are durations
// (duration_arg.h): a unit is read, a bad one named.
TEST(QpInspect, IntervalAndAtTakeUnits) {
  Harness h;
  const Outcome o = h.Run({"--interval", "250ms"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(h.sleeps, std::vector<double>{0.25});
  const Outcome bad = h.Run({"--interval", "2x"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--interval: '2x': unknown unit 'x'"), std::string::npos) << bad.err;
  Harness at;
  at.wall = true;
  const Outcome a = at.Run({"--at", "+1.5m"});
  EXPECT_EQ(a.code, 0) << a.err;
  ASSERT_FALSE(at.sleeps.empty());
  EXPECT_DOUBLE_EQ(at.sleeps.front(), 90.0);
  EXPECT_EQ(at.Run({"--at", "+25h"}).code, 2);
}

TEST(QpInspect, OutputWritesTwoSamplesOneSecondApart) {
  Harness h;
  const std::string path = Temp("out.json");
  const Outcome o = h.Run({"-o", path});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(h.sleeps, std::vector<double>{1.0});
  Result<Snapshot> s = SnapshotFromJson(ReadAll(path));
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_EQ(s->host, "lab");
  EXPECT_EQ(s->taken_at, "2026-11-23T05:20:00Z");
  EXPECT_EQ(s->tool.rfind("qp-inspect (qpconnect) ", 0), 0u) << s->tool;
  ASSERT_EQ(s->samples.size(), 2u);
  EXPECT_EQ(s->samples[1].at_seconds, 1.0);
  EXPECT_EQ(s->samples[1].qps.size(), 4u);
  EXPECT_EQ(s->notes, std::vector<std::string>{"a note from the reader"});
  EXPECT_NE(o.out.find("qp-validate " + path), std::string::npos) << o.out;
  std::filesystem::remove(path);
}

TEST(QpInspect, JsonIsTheSnapshotDocument) {
  Harness h;
  const Outcome o = h.Run({"--json", "--pid", "812"});
  EXPECT_EQ(o.code, 0) << o.err;
  Result<Snapshot> s = SnapshotFromJson(o.out);
  ASSERT_TRUE(s) << s.error().ToString() << "\n" << o.out;
  ASSERT_EQ(s->samples.size(), 1u);
  ASSERT_EQ(s->samples[0].qps.size(), 1u);
  EXPECT_EQ(s->samples[0].qps[0].pid, 812);
  EXPECT_EQ(s->samples[0].ports.size(), 2u) << "filters keep the devices' counters";
}

TEST(QpInspect, FiltersByDeviceAndCommand) {
  Harness h;
  Outcome o = h.Run({"-d", "rxe1", "--comm", "ibv_rc_pingpong,other"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("1 QP\n"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("rxe0"), std::string::npos) << o.out;
}

TEST(QpInspect, NoMatchSaysSoAndHowManyTheTrackerHas) {
  Harness h;
  const Outcome o = h.Run({"--pid", "4242"});
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.err.find("no QP matches --pid 4242 (the tracker lists 4 QPs on rxe0, rxe1)"),
            std::string::npos)
      << o.err;
}

TEST(QpInspect, AnEmptyTrackerIsExplainedNotShownAsNoQps) {
  Harness h;
  h.kernel.with_kernel_qps = false;
  h.kernel.with_user_qps = false;
  const Outcome o = h.Run({});
  EXPECT_EQ(o.code, 0);
  for (const char* s : {"lists no QP on rxe0, rxe1", "PID namespace", "initial PID namespace"}) {
    EXPECT_NE(o.err.find(s), std::string::npos) << s << "\n" << o.err;
  }
}

TEST(QpInspect, QpsWhosePidTheKernelWithholdsAreExplained) {
  Harness h;
  h.kernel.pids_withheld = true;
  const Outcome o = h.Run({});
  EXPECT_EQ(o.code, 0);
  for (const char* s :
       {"  ?  ", "note: 2 QP(s) have no pid", "outside this process's PID namespace"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
}

TEST(QpInspect, DevicesMissingOrUnknownExitThree) {
  Harness h;
  Outcome o = h.Run({"-d", "mlx5_0"});
  EXPECT_EQ(o.code, 3);
  EXPECT_NE(o.err.find("no device named 'mlx5_0'; devices: rxe0, rxe1"), std::string::npos)
      << o.err;
  h.kernel.devices.clear();
  o = h.Run({});
  EXPECT_EQ(o.code, 3);
  EXPECT_NE(o.err.find("no RDMA device visible through netlink"), std::string::npos) << o.err;
  h.kernel.devices_error =
      Error{ErrorCode::kNotFound, EPROTONOSUPPORT, "socket(NETLINK_RDMA)", "", "no RDMA netlink"};
  o = h.Run({});
  EXPECT_EQ(o.code, 3);
  EXPECT_NE(o.err.find("no RDMA netlink"), std::string::npos) << o.err;
}

TEST(QpInspect, ARefusedQueryExitsSixAndNamesThePrivilege) {
  Harness h;
  h.kernel.sample_error = ErrnoError(ErrorCode::kIo, EPERM, "RDMA_NLDEV_CMD_RES_QP_GET");
  const Outcome o = h.Run({});
  EXPECT_EQ(o.code, 6);
  EXPECT_NE(o.err.find("run qp-inspect as root"), std::string::npos) << o.err;
}

TEST(QpInspect, UsageErrorsExitTwoBeforeAnySample) {
  Harness h;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--interval", "0"},
                                             {"--interval", "abc"},
                                             {"--pid", "x"},
                                             {"--pid", ","},
                                             {"extra"},
                                             {"-o", "/nonexistent-dir/snap.json"}}) {
    const Outcome o = h.Run(args);
    EXPECT_EQ(o.code, 2) << args[0] << ": " << o.err;
    EXPECT_FALSE(o.err.empty());
  }
  EXPECT_EQ(h.kernel.samples_taken, 0);
}

TEST(QpInspectFormat, GoneQpsAreListedAndProcessStatesSpelledOut) {
  Snapshot s;
  s.host = "lab";
  KernelSample a;
  a.qps = {Qp("rxe0", 17, 17, 1, 1, 811, "ib_send_bw", "T"),
           Qp("rxe1", 17, 17, 1, 1, 812, "ib_send_bw")};
  KernelSample b = a;
  b.at_seconds = 1;
  b.qps.pop_back();
  s.samples = {a, b};
  const std::string text = FormatSnapshotText(s);
  for (const char* x : {"1 gone meanwhile", "(gone)", "T (stopped)"}) {
    EXPECT_NE(text.find(x), std::string::npos) << x << "\n" << text;
  }
  EXPECT_EQ(ProcessStateText("Z"), "Z (zombie)");
  EXPECT_EQ(ProcessStateText(""), "-");
}

// ---- netlink parsers over built messages ----------------------------------

struct Message {
  std::vector<char> buf = std::vector<char>(8192);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
};

void PutQp(nlmsghdr* nlh, uint32_t lqpn, std::optional<uint32_t> pid, const char* kern) {
  nlattr* entry = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, lqpn);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQPN, 17);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQ_PSN, 2681266);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_SQ_PSN, 2680267);
  mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 0);
  mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE, 2);
  mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, 3);
  if (pid) mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PID, *pid);
  if (kern != nullptr) mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_RES_KERN_NAME, kern);
  mnl_attr_nest_end(nlh, entry);
}

TEST(NetlinkParse, QpMessageGivesEveryTrackerField) {
  Message m;
  mnl_attr_put_u32(m.nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  mnl_attr_put_strz(m.nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  nlattr* table = mnl_attr_nest_start(m.nlh, RDMA_NLDEV_ATTR_RES_QP);
  PutQp(m.nlh, 17, 811, nullptr);
  PutQp(m.nlh, 1, std::nullopt, "ib_core");
  mnl_attr_nest_end(m.nlh, table);
  std::vector<KernelQp> qps;
  ParseQpMessage(m.nlh, &qps);
  ASSERT_EQ(qps.size(), 2u);
  EXPECT_EQ(qps[0].device, "rxe0");
  EXPECT_EQ(qps[0].port, 1);
  EXPECT_EQ(qps[0].lqpn, 17u);
  EXPECT_EQ(qps[0].rqpn, 17u);
  EXPECT_EQ(qps[0].sq_psn, 2680267u);
  EXPECT_EQ(qps[0].rq_psn, 2681266u);
  EXPECT_EQ(qps[0].type, "RC");
  EXPECT_EQ(qps[0].state, "RTS");
  EXPECT_EQ(qps[0].path_mig_state, "MIGRATED");
  EXPECT_EQ(qps[0].pid, 811);
  EXPECT_EQ(qps[1].pid, 0);
  EXPECT_EQ(qps[1].comm, "ib_core");
}

TEST(NetlinkParse, MalformedAttributesAreSkippedNotTrusted) {
  Message m;
  mnl_attr_put_strz(m.nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  nlattr* table = mnl_attr_nest_start(m.nlh, RDMA_NLDEV_ATTR_RES_QP);
  nlattr* entry = mnl_attr_nest_start(m.nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  mnl_attr_put_u8(m.nlh, RDMA_NLDEV_ATTR_RES_LQPN, 17);  // u8 where a u32 belongs
  mnl_attr_nest_end(m.nlh, entry);
  mnl_attr_nest_end(m.nlh, table);
  std::vector<KernelQp> qps;
  ParseQpMessage(m.nlh, &qps);
  EXPECT_TRUE(qps.empty());
}

TEST(NetlinkParse, DeviceAndStatMessages) {
  Message d;
  mnl_attr_put_u32(d.nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  mnl_attr_put_strz(d.nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rxe1");
  mnl_attr_put_u32(d.nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  NlDevice dev;
  ASSERT_TRUE(ParseDeviceMessage(d.nlh, &dev));
  EXPECT_EQ(dev.index, 3u);
  EXPECT_EQ(dev.name, "rxe1");
  EXPECT_EQ(dev.ports, 1u);

  Message s;
  nlattr* table = mnl_attr_nest_start(s.nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  for (auto [name, value] : {std::pair{"duplicate_request", 57u}, {"send_rnr_err", 3u}}) {
    nlattr* e = mnl_attr_nest_start(s.nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
    mnl_attr_put_strz(s.nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
    mnl_attr_put_u64(s.nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, value);
    mnl_attr_nest_end(s.nlh, e);
  }
  mnl_attr_nest_end(s.nlh, table);
  KernelPortCounters c;
  ParseStatMessage(s.nlh, &c);
  ASSERT_EQ(c.counters.size(), 2u);
  EXPECT_EQ(c.counters[0], (std::pair<std::string, uint64_t>{"duplicate_request", 57}));
}

TEST(NetlinkParse, KernelEnumerationsAreNamedAsRdmaNamesThem) {
  EXPECT_EQ(QpTypeName(1), "GSI");
  EXPECT_EQ(QpTypeName(4), "UD");
  EXPECT_EQ(QpTypeName(9), "XRC_INI");
  EXPECT_EQ(QpTypeName(77), "TYPE_77");
  EXPECT_EQ(QpStateName(0), "RESET");
  EXPECT_EQ(QpStateName(5), "SQE");
  EXPECT_EQ(QpStateName(6), "ERR");
  EXPECT_EQ(QpStateName(9), "STATE_9");
}

TEST(ProcAndSysfs, ReadProcessTakesTheCommandUpToTheLastParenthesis) {
  const std::string root = Temp("proc");
  std::filesystem::create_directories(root + "/123");
  std::ofstream(root + "/123/stat") << "123 (my (odd) prog) T 1 123 123 0 -1\n";
  Result<ProcessInfo> p = ReadProcess(123, root);
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(p->comm, "my (odd) prog");
  EXPECT_EQ(p->state, "T");
  Result<ProcessInfo> gone = ReadProcess(99999, root);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);

  const std::string sys = Temp("sys");
  const std::string dir = sys + "/class/infiniband/rxe0/ports/1/hw_counters";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/send_rnr_err") << "40\n";
  std::ofstream(dir + "/duplicate_request") << "57\n";
  std::ofstream(dir + "/lifespan") << "10\n";
  const auto counters = ReadSysfsCounters("rxe0", 1, sys);
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0].first, "duplicate_request");
  EXPECT_EQ(counters[1].second, 40u);
  EXPECT_TRUE(ReadSysfsCounters("rxe9", 1, sys).empty());
  std::filesystem::remove_all(root);
  std::filesystem::remove_all(sys);
}

TEST(QpInspect, AtWaitsForTheAgreedTimeAndNamesTheHostInTheFile) {
  Harness h;
  h.wall = true;
  const std::string dir = Temp("at");
  std::filesystem::create_directories(dir);
  const Outcome o = h.Run({"--at", "+5", "--host", "node-%r", "-o", dir + "/%h.json"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(h.sleeps, (std::vector<double>{5.0, 1.0}));
  // Issue 41: the wait is said, not slept silently.
  EXPECT_NE(o.err.find("qp-inspect: sampling at 08:01:45 UTC as agreed (--at), in 5.0 s ..."),
            std::string::npos)
      << o.err;
  Result<Snapshot> s = SnapshotFromJson(ReadAll(dir + "/node-0.json"));
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_EQ(s->host, "node-0");
  EXPECT_DOUBLE_EQ(s->started_epoch, 1.8e9 + 105);
  EXPECT_TRUE(s->notes.size() == 1) << "no lateness note";

  // An absolute time already past: sampled at once, with a note.
  const Outcome late = h.Run({"--at", "1800000000", "-o", dir + "/late.json"});
  EXPECT_EQ(late.code, 0) << late.err;
  EXPECT_EQ(late.err.find("sampling at"), std::string::npos) << "no wait, nothing said";
  Result<Snapshot> l = SnapshotFromJson(ReadAll(dir + "/late.json"));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->host, "lab");
  ASSERT_FALSE(l->notes.empty());
  EXPECT_NE(l->notes.front().find("s after --at"), std::string::npos) << l->notes.front();
  for (const char* bad : {"soon", "+", "+100000", "12", "-5"}) {
    EXPECT_EQ(h.Run({"--at", bad}).code, 2) << bad;
  }
  std::filesystem::remove_all(dir);
}

TEST(QpInspect, UnderAJobEachSampleFollowsABarrierAndRankZeroWritesEveryRank) {
  Harness h;
  h.wall = true;
  int barriers = 0;
  std::string gathered;
  inspect::Job job;
  job.rank = 0;
  job.size = 2;
  job.local_rank = 1;
  job.barrier = [&] { return ++barriers > 0; };
  job.gather = [&](const std::string& mine) {
    gathered = mine;
    return std::optional<std::vector<std::string>>({mine, mine});
  };
  h.job = &job;
  const std::string path = Temp("job.json");
  const Outcome o = h.Run({"-d", "rxe0,rxe1", "-o", path});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(barriers, 2) << "one before each sample";
  Result<Snapshot> mine = SnapshotFromJson(gathered);
  ASSERT_TRUE(mine) << mine.error().ToString();
  EXPECT_EQ(mine->tool.rfind("qp-inspect-mpi", 0), 0u) << mine->tool;
  for (const KernelQp& q : mine->samples.back().qps) EXPECT_EQ(q.device, "rxe1") << "local rank 1";
  Result<std::vector<Snapshot>> job_file = JobSnapshotsFromJson(ReadAll(path));
  ASSERT_TRUE(job_file) << job_file.error().ToString();
  EXPECT_EQ(job_file->size(), 2u);
  EXPECT_NE(o.out.find("job snapshot of 2 rank(s)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("within 0.000 ms"), std::string::npos) << o.out;

  job.barrier = [] { return false; };
  EXPECT_EQ(h.Run({"-o", path}).code, 4) << "a failed barrier";
  EXPECT_EQ(h.Run({}).code, 2) << "a job needs -o";
  std::filesystem::remove(path);
}

TEST(QpInspect, TheJobFileCarriesTheJobsHostList) {
  Harness h;
  inspect::Job job;
  job.size = 2;
  job.barrier = [] { return true; };
  job.gather = [](const std::string& mine) {
    return std::optional<std::vector<std::string>>({mine});
  };
  h.job = &job;
  const std::string path = Temp("hosts_job.json");
  auto listed = [&] {
    Result<std::vector<std::string>> hosts = JobHostsFromJson(ReadAll(path));
    EXPECT_TRUE(hosts);
    return hosts ? *hosts : std::vector<std::string>{};
  };
  // Under Slurm: its node list.
  h.environ["SLURM_JOB_NODELIST"] = "node[1-3]";
  Outcome o = h.Run({"-o", path});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(listed(), (std::vector<std::string>{"node1", "node2", "node3"}));
  EXPECT_NE(o.out.find("a host list of 3,"), std::string::npos) << o.out;
  // Given: --hosts and --hostfile, which Slurm's does not override.
  const std::string hostfile = Temp("hostfile");
  std::ofstream(hostfile) << "# mpirun's\nb1 slots=4\nb2:4\n";
  ASSERT_EQ(h.Run({"-o", path, "--hosts", "a[1-2]", "--hostfile", hostfile}).code, 0);
  EXPECT_EQ(listed(), (std::vector<std::string>{"a1", "a2", "b1", "b2"}));
  // None: no member.
  h.environ.clear();
  ASSERT_EQ(h.Run({"-o", path}).code, 0);
  EXPECT_EQ(ReadAll(path).find("\"hosts\""), std::string::npos);
  // A node list that cannot be read is said, and the job file written without it.
  h.environ["SLURM_JOB_NODELIST"] = "node[1-";
  o = h.Run({"-o", path});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("SLURM_JOB_NODELIST node[1-: '[' at column 5 is not closed; the job file "
                       "carries no host list (give --hosts)"),
            std::string::npos)
      << o.err;
  // A bad list given is a usage error; plain qp-inspect has no job file.
  o = h.Run({"-o", path, "--hosts", "n[2-1]"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--hosts n[2-1]: range 2-1 at column 3 goes down"), std::string::npos)
      << o.err;
  EXPECT_EQ(h.Run({"-o", path, "--hostfile", Temp("no_such_hostfile")}).code, 2);
  h.job = nullptr;
  o = h.Run({"--hosts", "a,b"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("give them to qp-validate"), std::string::npos) << o.err;
  std::filesystem::remove(path);
  std::filesystem::remove(hostfile);
}

// ---- the snapshot file ----------------------------------------------------

Snapshot Sample2() {
  Snapshot s;
  s.host = "lab";
  s.taken_at = "2026-11-23T05:20:00Z";
  s.tool = "qp-inspect (qpconnect) 0.1.0";
  KernelSample a;
  a.qps = {Qp("rxe0", 17, 17, 1, 2, 811, "ibv_rc_pingpong"), Gsi("rxe0")};
  a.qps[1].rqpn.reset();
  a.ports = {{"rxe0", 1, {{"duplicate_request", 5}}}};
  KernelSample b = a;
  b.at_seconds = 1.004;
  s.samples = {a, b};
  s.notes = {"n"};
  return s;
}

TEST(SnapshotJson, RoundTrips) {
  Snapshot s = Sample2();
  s.started_epoch = 1800000000.25;
  const std::string text = SnapshotToText(s);
  EXPECT_TRUE(LooksLikeSnapshot(text));
  Result<Snapshot> back = SnapshotFromJson(text);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_NE(text.find("\"interval_seconds\": 1.004"), std::string::npos) << text;
}

TEST(SnapshotJson, AJobFileHoldsEveryRanksSnapshotInRankOrder) {
  Snapshot a = Sample2(), b = Sample2();
  a.host = "node-0";
  b.host = "node-1";
  a.started_epoch = 1800000000.0;
  b.started_epoch = 1800000000.002;
  const std::string text = JobSnapshotsToText({SnapshotToText(a), SnapshotToText(b)});
  EXPECT_TRUE(LooksLikeJobSnapshots(text));
  EXPECT_FALSE(LooksLikeSnapshot(text));
  Result<std::vector<Snapshot>> back = JobSnapshotsFromJson(text);
  ASSERT_TRUE(back) << back.error().ToString();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0], a);
  EXPECT_EQ((*back)[1], b);
  EXPECT_NEAR(SnapshotSkewSeconds(*back), 0.002, 1e-6);
  Snapshot unknown = Sample2();  // started_epoch 0: not counted
  EXPECT_NEAR(SnapshotSkewSeconds({a, b, unknown}), 0.002, 1e-6);

  std::string bad = text;
  bad.replace(bad.find("\"lqpn\":17"), 9, "\"lqpn\":-1");
  Result<std::vector<Snapshot>> refused = JobSnapshotsFromJson(bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().attribute, "snapshots[0].samples[0].qps[0].lqpn");
}

// Issue 41: a job file is read in one pass, one rank at a time, not as one
// JSON tree. The stream below counts what the reader took from it: each
// rank's snapshot is handed over before the reader has taken more than 2 MiB
// past its end (its chunk of 1 MiB, rounded up), where a tree would have
// had to take the whole 9 MB file first. Disabled streaming (reading the
// whole stream before the first snapshot) fails the bound at rank 0.
TEST(SnapshotJson, AJobFileIsReadInOnePassOneRankAtATime) {
  std::vector<std::string> texts;
  std::vector<size_t> ends;  // where each rank's text ends in the file
  Snapshot big = Sample2();
  for (int i = 0; i < 400; ++i) big.samples[0].qps.push_back(big.samples[0].qps[0]);
  std::string prefix = JobSnapshotsToText({});
  prefix.resize(prefix.find('[') + 2);  // up to the first snapshot
  size_t at = prefix.size();
  for (int r = 0; r < 128; ++r) {
    big.host = "node-" + std::to_string(r);
    texts.push_back(SnapshotToText(big));
    at += texts.back().size() - 1 + 2;  // JobSnapshotsToText drops the newline, adds ",\n"
    ends.push_back(at);
  }
  const std::string text = JobSnapshotsToText(texts);
  ASSERT_GT(text.size(), size_t{8} << 20);

  struct Counting : std::streambuf {
    explicit Counting(const std::string& t) : text(t) {}
    int_type underflow() override {
      if (taken == text.size()) return traits_type::eof();
      char* p = const_cast<char*>(text.data()) + taken;
      const size_t n = std::min<size_t>(4096, text.size() - taken);
      setg(p, p, p + n);
      taken += n;
      return traits_type::to_int_type(*p);
    }
    const std::string& text;
    size_t taken = 0;
  } counting(text);
  std::istream in(&counting);
  size_t worst = 0;  // the most taken past a rank's end when it was handed over
  std::vector<std::string> hosts;
  Result<size_t> n = ReadJobSnapshots(in, [&](size_t rank, Snapshot&& s) {
    hosts.push_back(s.host);
    worst = std::max(worst, counting.taken - std::min(counting.taken, ends[rank]));
    EXPECT_LE(counting.taken, ends[rank] + (size_t{2} << 20)) << "rank " << rank;
  });
  ASSERT_TRUE(n) << n.error().ToString();
  EXPECT_EQ(*n, 128u);
  ASSERT_EQ(hosts.size(), 128u);
  EXPECT_EQ(hosts.front(), "node-0");
  EXPECT_EQ(hosts.back(), "node-127");
  EXPECT_EQ(counting.taken, text.size());

  // A file cut short names the snapshot it ends in, after the whole ones.
  std::istringstream cut(text.substr(0, ends[2] + 1000));
  size_t whole = 0;
  Result<size_t> short_read = ReadJobSnapshots(cut, [&](size_t, Snapshot&&) { ++whole; });
  ASSERT_FALSE(short_read);
  EXPECT_EQ(short_read.error().attribute, "snapshots[3]");
  EXPECT_EQ(whole, 3u);
  // What comes after the snapshots is read too: a bad member is refused.
  for (const char* bad :
       {"{\"format\": \"qpconnect-job-snapshots\", \"version\": 1}", "{\"snapshots\": []}", "[]",
        "{\"format\": \"qpconnect-job-snapshots\", \"version\": 2, "
        "\"snapshots\": []}",
        "{\"format\": \"qpconnect-job-snapshots\", \"version\": 1, "
        "\"snapshots\": []} x"}) {
    std::istringstream b(bad);
    EXPECT_FALSE(ReadJobSnapshots(b, [](size_t, Snapshot&&) {})) << bad;
  }
  std::istringstream empty_job(JobSnapshotsToText({}));
  Result<size_t> none = ReadJobSnapshots(empty_job, [](size_t, Snapshot&&) {});
  ASSERT_TRUE(none) << none.error().ToString();
  EXPECT_EQ(*none, 0u);
}

TEST(SnapshotJson, RefusesWhatIsNotASnapshotNamingTheField) {
  const std::string good = SnapshotToText(Sample2());
  struct Case {
    std::string text;
    std::string field;
    std::string detail;
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  const std::vector<Case> cases = {
      {"{", "", "not valid JSON"},
      {"[]", "", "not a JSON object"},
      {replace("qpconnect-snapshot", "qpconnect-trace"), "format", "not a qp-inspect snapshot"},
      {replace("\"version\": 1", "\"version\": 2"), "version", "not supported"},
      {replace("\"lqpn\":17", "\"lqpn\":16777216"), "samples[0].qps[0].lqpn", "above"},
      {replace("\"pid\":811", "\"pid\":-1"), "samples[0].qps[0].pid", "unsigned"},
      {replace("\"sq_psn\":1", "\"sq_psn\":\"1\""), "samples[0].qps[0].sq_psn", "unsigned"},
      {replace("\"device\":\"rxe0\",\"port\":1,\"lqpn\"", "\"device\":\"\",\"port\":1,\"lqpn\""),
       "samples[0].qps[0].device", "empty"},
      {replace("\"duplicate_request\":5", "\"duplicate_request\":\"x\""),
       "samples[0].ports[0].counters.duplicate_request", "unsigned"},
      {replace("\"at_seconds\": 1.004", "\"at_seconds\": -1.0"), "samples[1].at_seconds",
       "earlier"},
      {R"({"format":"qpconnect-snapshot","version":1,"samples":[]})", "samples", "empty"},
      {R"({"format":"qpconnect-snapshot","version":1})", "samples", "missing"},
  };
  for (const Case& c : cases) {
    Result<Snapshot> r = SnapshotFromJson(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
    EXPECT_EQ(r.error().attribute, c.field) << c.text;
    EXPECT_NE(r.error().detail.find(c.detail), std::string::npos)
        << r.error().detail << " for " << c.text;
  }
  EXPECT_FALSE(LooksLikeSnapshot(R"({"local": {"transport": "rc"}})"));
}

}  // namespace
}  // namespace qpconnect::tools::inspect
