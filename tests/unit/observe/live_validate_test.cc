// SPDX-License-Identifier: MIT
// qp-validate's snapshot mode through Run(), in-process: snapshot files built
// from kernel samples (as qp-inspect writes them), alone and mixed with dumps
// and traces; text and JSON verdicts; exit statuses; unusable input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "qpconnect/observe/snapshot.h"
#include "qpconnect/observe/snapshot_json.h"
#include "run.h"

namespace qpconnect::tools::qp_validate {
namespace {

KernelQp Rc(const std::string& dev, uint32_t qpn, uint32_t sq, uint32_t rq, int pid,
            const std::string& pstate = "S") {
  KernelQp q;
  q.device = dev;
  q.port = 1;
  q.lqpn = qpn;
  q.rqpn = 17;
  q.sq_psn = sq;
  q.rq_psn = rq;
  q.type = "RC";
  q.state = "RTS";
  q.pid = pid;
  q.comm = "ibv_rc_pingpong";
  q.process_state = pstate;
  return q;
}

// Two samples of the lab's pingpong pair (rxe0 QP 17 pid 811, rxe1 QP 17 pid
// 812): server sends from `server_sq`, client expects `client_rq`; each PSN
// advances by `step` between the samples.
Snapshot Pingpong(uint32_t server_sq, uint32_t client_rq, uint32_t step) {
  Snapshot s;
  s.host = "lab";
  s.tool = "qp-inspect (qpconnect) test";
  for (uint32_t i = 0; i < 2; ++i) {
    KernelSample k;
    k.at_seconds = i;
    k.qps = {Rc("rxe0", 17, server_sq + i * step, 5000 + i * step, 811),
             Rc("rxe1", 17, 5000 + i * step, client_rq + i * step, 812)};
    k.ports = {{"rxe0", 1, {{"completer_retry_err", 0}}},
               {"rxe1", 1, {{"duplicate_request", 3 + 57 * i}}}};
    s.samples.push_back(std::move(k));
  }
  return s;
}

class SnapshotMode : public testing::Test {
 protected:
  void TearDown() override {
    for (const std::string& f : files_) std::filesystem::remove(f);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("qpc_live_validate_" + std::to_string(::getpid()) + "_" + name))
                                 .string();
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }
  std::string Write(const std::string& name, const Snapshot& s) {
    return Write(name, SnapshotToText(s));
  }

  struct Outcome {
    int code;
    std::string out;
    std::string err;
  };
  Outcome Validate(const std::vector<std::string>& args) {
    std::istringstream in;
    std::ostringstream out, err;
    const int code = qp_validate::Run(args, in, out, err);
    return {code, out.str(), err.str()};
  }

  std::vector<std::string> files_;
};

std::string Data(const std::string& rel) { return std::string(QPC_TESTDATA_DIR) + "/" + rel; }

TEST_F(SnapshotMode, HealthyPairExitsZeroAndIsListedWithBothPids) {
  const Outcome o = Validate({Write("ok.json", Pingpong(1000, 1000, 100))});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (const char* s : {"snapshot, host lab, 2 samples 1.0 s apart", "pair 1 (mutual qpn",
                        "): sound", "pid 811 ibv_rc_pingpong", "pid 812 ibv_rc_pingpong",
                        "moving in 1.0 s: rxe0 QP 17 sent +100", "0 errors"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
}

TEST_F(SnapshotMode, ShiftedPsnExitsOneWithRuleValuesEvidenceAndFix) {
  const Outcome o = Validate({Write("psn.json", Pingpong(2680267, 2681266, 0))});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  for (const char* s : {"NOT sound", "error   psn-receiver-ahead  rq_psn", "999 ahead",
                        "rxe1 QP 17: rq_psn 2681266   rxe0 QP 17: sq_psn 2680267",
                        "evidence: duplicate_request +57 on rxe1 port 1",
                        "fix: Set the receiver's rq_psn", "1 error"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
}

TEST_F(SnapshotMode, JsonNamesBothQpsAndTheEvidence) {
  const Outcome o = Validate({"--json", Write("psn.json", Pingpong(2680267, 2681266, 0))});
  EXPECT_EQ(o.code, 1) << o.err;
  const auto doc = nlohmann::json::parse(o.out);
  EXPECT_EQ(doc.at("summary").at("exit_code"), 1);
  EXPECT_EQ(doc.at("summary").at("errors"), 1);
  ASSERT_EQ(doc.at("pairs").size(), 1u);
  EXPECT_EQ(doc.at("pairs")[0].at("judged_by"), "live rules");
  EXPECT_EQ(doc.at("pairs")[0].at("sound"), false);
  const auto& f = doc.at("live_findings").at(0);
  EXPECT_EQ(f.at("id"), "psn-receiver-ahead");
  EXPECT_EQ(f.at("qp").at("pid"), 812);
  EXPECT_EQ(f.at("peer").at("pid"), 811);
  EXPECT_EQ(f.at("qp").at("comm"), "ibv_rc_pingpong");
  EXPECT_EQ(f.at("local_value"), "rq_psn 2681266");
  EXPECT_FALSE(f.at("evidence").empty());
  EXPECT_FALSE(f.at("fix").get<std::string>().empty());
}

TEST_F(SnapshotMode, KilledReceiverIsAPeerGone) {
  Snapshot s = Pingpong(1000, 1000, 0);
  s.samples[1].qps.pop_back();
  const Outcome o = Validate({Write("gone.json", s)});
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_NE(o.out.find("peer-qp-gone"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("the peer QP no longer exists"), std::string::npos) << o.out;
}

TEST_F(SnapshotMode, MixedWithDumpsJudgesThoseByTheValidatorsRules) {
  const Outcome o =
      Validate({Write("ok.json", Pingpong(1000, 1000, 100)), Data("validate/rc_broken_a.dump.json"),
                Data("validate/rc_broken_b.dump.json")});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  for (const char* s : {"): sound", "judged by the validator's rules", "psn-mismatch",
                        "mtu-mismatch", ": dump, "}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
}

TEST_F(SnapshotMode, MixedWithTraces) {
  const Outcome o = Validate({Write("ok.json", Pingpong(1000, 1000, 100)),
                              Data("trace/rping_client.json"), Data("trace/rping_server.json")});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find(": trace, rping pid 201"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("pair 2 (mutual qpn + gid; judged by the validator's rules): sound"),
            std::string::npos)
      << o.out;
}

TEST_F(SnapshotMode, UnusableInputExitsTwoNamingTheField) {
  std::string text = SnapshotToText(Pingpong(1, 1, 0));
  text.replace(text.find("\"lqpn\":17"), 9, "\"lqpn\":-3");
  const std::string bad = Write("bad.json", text);
  Outcome o = Validate({bad});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("samples[0].qps[0].lqpn"), std::string::npos) << o.err;

  o = Validate({"--transport", "rc", Write("ok.json", Pingpong(1, 1, 0))});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--transport does not apply to snapshots"), std::string::npos) << o.err;

  Snapshot empty = Pingpong(1, 1, 0);
  for (KernelSample& k : empty.samples) k.qps.clear();
  o = Validate({Write("empty.json", empty)});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("hold no QP"), std::string::npos) << o.err;
}

// The pingpong pair as two hosts' snapshots: node-a holds rxe0's QP, node-b
// rxe1's, their first samples 2 ms apart.
std::vector<Snapshot> TwoHosts() {
  Snapshot a = Pingpong(1000, 1000, 100), b = a;
  a.host = "node-a";
  b.host = "node-b";
  a.started_epoch = 1800000000.000;
  b.started_epoch = 1800000000.002;
  for (KernelSample& k : a.samples) {
    std::erase_if(k.qps, [](const KernelQp& q) { return q.device != "rxe0"; });
    std::erase_if(k.ports, [](const KernelPortCounters& p) { return p.device != "rxe0"; });
  }
  for (KernelSample& k : b.samples) {
    std::erase_if(k.qps, [](const KernelQp& q) { return q.device != "rxe1"; });
    std::erase_if(k.ports, [](const KernelPortCounters& p) { return p.device != "rxe1"; });
  }
  return {a, b};
}

TEST_F(SnapshotMode, ADirectoryOfHostsIsPairedAcrossThemWithTheirSkew) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("qpc_live_validate_dir_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<Snapshot> hosts = TwoHosts();
  std::ofstream(dir / "node-a.json") << SnapshotToText(hosts[0]);
  std::ofstream(dir / "node-b.json") << SnapshotToText(hosts[1]);
  const Outcome o = Validate({dir.string()});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  for (const char* s : {"node-a.json: snapshot, host node-a", "node-b.json: snapshot, host node-b",
                        "note: the 2 snapshots' first samples started within 0.002 s",
                        "node-a:rxe0 QP 17 (pid 811", "node-b:rxe1 QP 17 (pid 812", "): sound"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_EQ(Validate({dir.string()}).code, 2) << "an empty directory";
  std::filesystem::remove_all(dir);
}

TEST_F(SnapshotMode, AJobFileIsEveryRanksSnapshot) {
  const std::vector<Snapshot> hosts = TwoHosts();
  const std::string job =
      Write("job.json", JobSnapshotsToText({SnapshotToText(hosts[0]), SnapshotToText(hosts[1])}));
  const Outcome o = Validate({"--json", job});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  const auto doc = nlohmann::json::parse(o.out);
  ASSERT_EQ(doc.at("pairs").size(), 1u);
  EXPECT_EQ(doc.at("pairs")[0].at("a").at("host"), "node-a");
  EXPECT_EQ(doc.at("pairs")[0].at("b").at("host"), "node-b");
  EXPECT_NE(doc.at("notes").dump().find("started within 0.002 s"), std::string::npos) << o.out;
  const Outcome bad = Validate({Write("badjob.json",
                                      "{\"format\": \"qpconnect-job-snapshots\", "
                                      "\"version\": 1, \"snapshots\": [{}]}")});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("not a usable job snapshot file"), std::string::npos) << bad.err;
}

TEST_F(SnapshotMode, AListedHostThatSentNoSnapshotIsAnErrorOfTheJob) {
  // node-a's snapshot alone: its QP 17 talks to node-b's, which sent nothing.
  const std::vector<Snapshot> hosts = TwoHosts();
  const std::string a = Write("node-a.json", hosts[0]);
  const Outcome alone = Validate({a});
  EXPECT_EQ(alone.out.find("sent no snapshot"), std::string::npos) << alone.out;

  const Outcome o = Validate({"--hosts", "node-[a-b]x,node-a,node-b", a});
  EXPECT_EQ(o.code, 2) << "letters in a bracket: " << o.out;
  EXPECT_NE(o.err.find("qp-validate: --hosts node-[a-b]x,node-a,node-b: 'a' at column 7: a "
                       "bracket holds numbers and ranges (1-4,7)"),
            std::string::npos)
      << o.err;

  const Outcome named = Validate({"--hosts", "node-a,node-b", a});
  EXPECT_EQ(named.code, 1) << named.out << named.err;
  EXPECT_NE(named.out.find("\n  error: node-b sent no snapshot: 1 QP on 1 host points at it (by "
                           "elimination"),
            std::string::npos)
      << named.out;
  const std::string hostfile = Write("hostfile", "node-a slots=2\nnode-b slots=2\n");
  const Outcome json = Validate({"--json", "--hostfile", hostfile, a});
  EXPECT_EQ(json.code, 1) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc.at("job_summary").at("missing_hosts").at(0).at("host"), "node-b");
  EXPECT_EQ(doc.at("job_summary").at("missing_hosts").at(0).at("pointing_qps"), 1);
  EXPECT_EQ(doc.at("summary").at("exit_code"), 1);
  EXPECT_EQ(doc.at("summary").at("errors"), doc.at("job_summary").at("missing_hosts").size());

  // Both hosts there: the list is satisfied.
  const std::string b = Write("node-b.json", hosts[1]);
  EXPECT_EQ(Validate({"--hosts", "node-a,node-b", a, b}).code, 0);
  // A job file carries its own list.
  const std::string job =
      Write("job1.json", JobSnapshotsToText({SnapshotToText(hosts[0])}, {"node-a", "node-b"}));
  const Outcome from_job = Validate({job});
  EXPECT_EQ(from_job.code, 1);
  EXPECT_NE(from_job.out.find("error: node-b sent no snapshot"), std::string::npos) << from_job.out;
  // Not for endpoint files.
  EXPECT_EQ(
      Validate({"--hosts", "a", Data("validate/rc_clean_a.json"), Data("validate/rc_clean_b.json")})
          .code,
      2);
}

}  // namespace
}  // namespace qpconnect::tools::qp_validate
