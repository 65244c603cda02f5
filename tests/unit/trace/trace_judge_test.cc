// SPDX-License-Identifier: MIT
// The judge over traces recorded in the lab (tests/testdata/trace): pairs,
// findings, failed transitions explained, QPs without a peer; and
// `qp-validate TRACE...` through Run(), in-process: text, JSON, exit statuses.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "qpconnect/observe/trace_judge.h"
#include "qpconnect/observe/trace_reader.h"
#include "run.h"

namespace qpconnect::trace {
namespace {

std::string Path(const std::string& name) {
  return std::string(QPC_TESTDATA_DIR) + "/trace/" + name;
}

std::string Fixture(const std::string& name) {
  std::ifstream in(Path(name), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Observation Read(const std::vector<std::string>& names) {
  Observation o;
  for (const std::string& n : names) {
    Result<TraceHeader> r = ReadTrace(Fixture(n), n, o);
    EXPECT_TRUE(r) << n << ": " << (r ? "" : r.error().detail);
  }
  return o;
}

bool Has(const std::vector<Finding>& findings, const std::string& id) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& f) { return f.id == id; });
}

TEST(TraceJudge, NamesThePathMtuRuleForPingpongsWithDifferentM) {
  const Verdict v = JudgeObservation(Read({"rc_m512_server.json", "rc_m1024_client.json"}));
  ASSERT_EQ(v.pairs.size(), 1u);
  EXPECT_EQ(v.pairs[0].pair.how, "mutual qpn + gid");
  EXPECT_TRUE(v.pairs[0].judged);
  EXPECT_TRUE(Has(v.pairs[0].findings, "mtu-mismatch"));
  EXPECT_TRUE(v.pairs[0].failures.empty());
  EXPECT_TRUE(v.lone.empty());
  EXPECT_EQ(v.errors, 1u);
}

// Whether a failed modify was a move of the QP state machine at all is read
// from the state table (verbs/qp_state_table.h): RTS->SQD is one, RTR->INIT
// is not.
TEST(TraceJudge, ReadsTheStateMachineFromTheStateTable) {
  Observation o;
  ObservedQp& q = o.qps.emplace_back();
  q.transport = Transport::kRc;
  for (auto [from, to] : {std::pair{"RTS", "SQD"}, {"RTR", "INIT"}, {"SQD", "SQD"}}) {
    q.transitions.push_back({from, to, IBV_QP_STATE, {}, EINVAL, EINVAL});
  }
  const Verdict v = JudgeObservation(o);
  ASSERT_EQ(v.lone.size(), 1u);
  ASSERT_EQ(v.lone[0].failures.size(), 3u);
  EXPECT_EQ(v.lone[0].failures[0].mask_problem, "");
  EXPECT_EQ(v.lone[0].failures[1].mask_problem,
            "RTR->INIT is not a transition of the QP state machine (ibv_modify_qp(3))");
  EXPECT_EQ(v.lone[0].failures[2].mask_problem, "");
}

TEST(TraceJudge, FindsNoErrorInCleanStockRuns) {
  for (const auto& files :
       std::vector<std::vector<std::string>>{{"uc_server.json", "uc_client.json"},
                                             {"ud_server.json", "ud_client.json"},
                                             {"rping_server.json", "rping_client.json"},
                                             {"write_bw_server.json", "write_bw_client.json"}}) {
    const Verdict v = JudgeObservation(Read(files));
    ASSERT_EQ(v.pairs.size(), 1u) << files[0];
    EXPECT_EQ(v.errors, 0u) << files[0];
    EXPECT_TRUE(v.lone.empty()) << files[0];
  }
}

TEST(TraceJudge, PairsUdPingpongsByTheirAddressHandles) {
  const Verdict v = JudgeObservation(Read({"ud_server.json", "ud_client.json"}));
  ASSERT_EQ(v.pairs.size(), 1u);
  EXPECT_EQ(v.pairs[0].pair.how, "ud address handles + gid");
  ASSERT_FALSE(v.pairs[0].notes.empty());
  EXPECT_NE(v.pairs[0].notes[0].find("remote QPN"), std::string::npos);
}

TEST(TraceJudge, WarnsAboutRdmaCmsMinRnrTimerZero) {
  const Verdict v = JudgeObservation(Read({"rping_server.json", "rping_client.json"}));
  ASSERT_EQ(v.pairs.size(), 1u);
  EXPECT_TRUE(Has(v.pairs[0].findings, "min-rnr-timer-zero"));
  EXPECT_EQ(v.warnings, 2u);  // once per side
}

TEST(TraceJudge, TakesAServerThatNeverReachedRtsAtItsPeersWord) {
  // ib_write_bw's server only receives: RTR, no RTS, no sq_psn.
  const Verdict v = JudgeObservation(Read({"write_bw_server.json", "write_bw_client.json"}));
  ASSERT_EQ(v.pairs.size(), 1u);
  EXPECT_FALSE(Has(v.pairs[0].findings, "psn-mismatch"));
  const auto& notes = v.pairs[0].notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.find("never set sq_psn") != std::string::npos;
  }));
}

TEST(TraceJudge, ExplainsAFailedRtrWithTheValidatorsRuleAndTheErrno) {
  // Server with -g 7 (no such GID): its INIT->RTR fails with ENODATA; the
  // client, whose RTR never came, is paired one-sidedly.
  const Verdict v = JudgeObservation(Read({"rc_badgid_server.json", "rc_badgid_client.json"}));
  ASSERT_EQ(v.pairs.size(), 1u);
  const PairVerdict& p = v.pairs[0];
  EXPECT_EQ(p.pair.how, "one-sided qpn (the peer never set dest_qp_num) + gid");
  ASSERT_EQ(p.failures.size(), 1u);
  const FailedTransition& f = p.failures[0];
  EXPECT_EQ(f.qp, p.pair.a);  // the server's file comes first
  EXPECT_EQ(f.transition, 1u);
  ASSERT_EQ(f.causes.size(), 1u);
  EXPECT_EQ(f.causes[0].id, "sgid-index-not-in-table");
  EXPECT_EQ(f.mask_problem, "");
  EXPECT_NE(f.errno_hint.find("sgid_index 7"), std::string::npos);
  EXPECT_EQ(v.errors, 2u);  // the finding and the failed transition
}

TEST(TraceJudge, ExplainsAFailedRtrOfAQpWithoutPeerByItsOwnRules) {
  const Verdict v = JudgeObservation(Read({"rc_badgid_server.json"}));
  ASSERT_TRUE(v.pairs.empty());
  ASSERT_EQ(v.lone.size(), 1u);
  EXPECT_EQ(v.lone[0].status, "dangling");
  EXPECT_NE(v.lone[0].detail.find("names no other QP"), std::string::npos);
  ASSERT_EQ(v.lone[0].failures.size(), 1u);
  ASSERT_FALSE(v.lone[0].failures[0].causes.empty());
  EXPECT_EQ(v.lone[0].failures[0].causes[0].id, "sgid-index-not-in-table");
}

TEST(TraceJudge, ReportsQpsOfUnrelatedRunsAsWithoutPeer) {
  const Verdict v = JudgeObservation(Read({"rc_m512_server.json", "rping_client.json"}));
  EXPECT_TRUE(v.pairs.empty());
  ASSERT_EQ(v.lone.size(), 2u);
  EXPECT_EQ(v.lone[0].status, "dangling");
  EXPECT_EQ(v.errors, 0u);
  // Two QPs without a peer, and rping's min_rnr_timer 0 judged on its own.
  EXPECT_EQ(v.warnings, 3u);
  EXPECT_TRUE(Has(v.lone[1].findings, "min-rnr-timer-zero"));
}

TEST(TraceJudge, ChecksTheMaskAgainstTheStateTable) {
  // An RC RTR without DEST_QPN: the preload records it, the verbs layer's
  // table names the missing bit.
  Observation o;
  const std::string text =
      R"({"qp_trace":1,"event":"start","pid":1})"
      "\n"
      R"({"event":"modify_qp","device":"rxe0","qpn":17,"qp_type":"RC","from":"INIT","to":"RTR",)"
      R"("mask":4481,"attr":{"ah_attr":{"dlid":0,"port_num":1,"is_global":false},)"
      R"("path_mtu":1024,"rq_psn":5},"result":22,"errno":22})"
      "\n";
  ASSERT_TRUE(ReadTrace(text, "m.json", o));
  const Verdict v = JudgeObservation(o);
  ASSERT_EQ(v.lone.size(), 1u);
  ASSERT_EQ(v.lone[0].failures.size(), 1u);
  EXPECT_NE(v.lone[0].failures[0].mask_problem.find("mask lacks required"), std::string::npos);
  EXPECT_NE(v.lone[0].failures[0].mask_problem.find("DEST_QPN"), std::string::npos);
}

// The mask is judged by the state table's row for the traced (from, to)
// pair, on every move the table has, not only RESET->INIT->RTR->RTS: the
// same UC mask into RTS is right from RTR and sends a bit RTS->RTS refuses.
TEST(TraceJudge, ChecksTheMaskByTheFromAndToStates) {
  Observation o;
  const std::string text =
      R"({"qp_trace":1,"event":"start","pid":1})"
      "\n"
      R"({"event":"modify_qp","device":"rxe0","qpn":17,"qp_type":"UC","from":"RTR","to":"RTS",)"
      R"("mask":65537,"attr":{"sq_psn":5},"result":22,"errno":22})"
      "\n"
      R"({"event":"modify_qp","device":"rxe0","qpn":18,"qp_type":"UC","from":"RTS","to":"RTS",)"
      R"("mask":65537,"attr":{"sq_psn":5},"result":22,"errno":22})"
      "\n";
  ASSERT_TRUE(ReadTrace(text, "m.json", o));
  const Verdict v = JudgeObservation(o);
  ASSERT_EQ(v.lone.size(), 2u);
  std::map<uint32_t, std::string> problem;
  for (const auto& lone : v.lone) {
    ASSERT_EQ(lone.failures.size(), 1u);
    problem[o.qps[lone.qp].qpn] = lone.failures[0].mask_problem;
  }
  EXPECT_EQ(problem[17], "");
  EXPECT_EQ(problem[18], "mask sends SQ_PSN, not allowed at this transition");
}

// qp-validate TRACE... in-process.
struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

Outcome RunCli(const std::vector<std::string>& args) {
  std::ostringstream o;
  std::ostringstream e;
  std::istringstream in;
  Outcome r;
  r.code = tools::qp_validate::Run(args, in, o, e);
  r.out = o.str();
  r.err = e.str();
  return r;
}

// A file of `text` in the test's temporary directory.
std::string Temp(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kStartOnly = R"({"qp_trace":1,"event":"start","pid":1})"
                                   "\n";

TEST(QpValidateTraces, ExitsOneAndNamesPathMtuForDifferentM) {
  const Outcome o = RunCli({Path("rc_m512_server.json"), Path("rc_m1024_client.json")});
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.out.find("mtu-mismatch  path_mtu"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("pair 1 (mutual qpn + gid)"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
}

TEST(QpValidateTraces, ExitsZeroForASoundPair) {
  const Outcome o = RunCli({Path("uc_server.json"), Path("uc_client.json")});
  EXPECT_EQ(o.code, 0) << o.out;
  EXPECT_NE(o.out.find("1 pair, 0 QPs without a peer; 0 errors"), std::string::npos) << o.out;
}

TEST(QpValidateTraces, PrintsTheFailedTransitionAndItsLikelyCause) {
  const Outcome o = RunCli({Path("rc_badgid_server.json"), Path("rc_badgid_client.json")});
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.out.find("INIT->RTR FAILED: errno 61 ("), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("likely cause: sgid-index-not-in-table"), std::string::npos) << o.out;
}

TEST(QpValidateTraces, JsonCarriesPairsFailuresAndTheExitCode) {
  const Outcome o =
      RunCli({"--json", Path("rc_badgid_server.json"), Path("rc_badgid_client.json")});
  ASSERT_EQ(o.code, 1);
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["summary"]["exit_code"], 1);
  EXPECT_EQ(j["summary"]["pairs"], 1);
  EXPECT_EQ(j["traces"].size(), 2u);
  const auto& p = j["pairs"][0];
  EXPECT_EQ(p["local"]["qpn"], 20);
  EXPECT_EQ(p["failed_transitions"][0]["side"], "local");
  EXPECT_EQ(p["failed_transitions"][0]["errno"], 61);
  EXPECT_EQ(p["failed_transitions"][0]["likely_causes"][0]["id"], "sgid-index-not-in-table");
  EXPECT_EQ(p["findings"][0]["id"], "sgid-index-not-in-table");
  EXPECT_EQ(p["findings"][0]["severity"], "error");
}

TEST(QpValidateTraces, TakesMoreThanTwoFiles) {
  const Outcome o =
      RunCli({Path("uc_server.json"), Path("uc_client.json"), Path("rping_server.json")});
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("1 pair, 1 QP without a peer"), std::string::npos) << o.out;
}

TEST(QpValidateTraces, ExitsTwoForAMalformedTrace) {
  const Outcome o = RunCli(
      {Path("uc_server.json"), Temp("bad_trace.json", std::string(kStartOnly) + "{oops}\n")});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("bad_trace.json: line 2: not JSON"), std::string::npos) << o.err;
}

TEST(QpValidateTraces, ExitsTwoWhenAFileAmongTracesIsNot) {
  const Outcome o = RunCli({Path("uc_server.json"), Path("uc_client.json"),
                            std::string(QPC_TESTDATA_DIR) + "/validate/rc_clean_a.json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("not a qp-trace file"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("or qp-trace files"), std::string::npos) << o.err;
}

TEST(QpValidateTraces, ExitsTwoWhenNoTraceHasAQp) {
  const Outcome o = RunCli({Temp("no_qp_trace.json", kStartOnly)});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("record no QP"), std::string::npos) << o.err;
}

TEST(QpValidateTraces, RefusesTransportWithTraces) {
  const Outcome o = RunCli({"-t", "rc", Path("uc_server.json"), Path("uc_client.json")});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--transport does not apply to traces"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace qpconnect::trace
