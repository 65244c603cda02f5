// SPDX-License-Identifier: MIT
// Every host accounted for (issue 41 item 2): the job's host list as
// launchers write it (job_hosts.h: Slurm's and pdsh's bracket syntax, mpirun
// hostfiles), carried in qp-inspect-mpi's job file (snapshot_json.h), and
// the job summary naming a listed host that sent no snapshot with the QPs
// that point at it (job_summary.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "qpconnect/observe/job_hosts.h"
#include "qpconnect/observe/job_summary.h"
#include "qpconnect/observe/judge.h"
#include "qpconnect/observe/snapshot_json.h"

namespace qpconnect {
namespace {

using Names = std::vector<std::string>;

Names Expand(const std::string& list) {
  Result<Names> r = ExpandHostList(list);
  EXPECT_TRUE(r) << list << ": " << r.error().detail;
  return r ? *r : Names{};
}

std::string ExpandError(const std::string& list) {
  Result<Names> r = ExpandHostList(list);
  EXPECT_FALSE(r) << list << " expanded";
  return r ? std::string() : r.error().detail;
}

TEST(HostList, ExpandsSlurmNodeLists) {
  EXPECT_EQ(Expand("node[01-04,07],gpu-[1-2]"),
            (Names{"node01", "node02", "node03", "node04", "node07", "gpu-1", "gpu-2"}));
  EXPECT_EQ(Expand("node-a"), (Names{"node-a"}));
  EXPECT_EQ(Expand("n[8-11]"), (Names{"n8", "n9", "n10", "n11"})) << "no padding when unwritten";
  EXPECT_EQ(Expand("n[098-101]"), (Names{"n098", "n099", "n100", "n101"}));
  EXPECT_EQ(Expand("r[1-2]n[1-2]-ib"), (Names{"r1n1-ib", "r1n2-ib", "r2n1-ib", "r2n2-ib"}))
      << "several brackets multiply, the last varying fastest";
  EXPECT_EQ(Expand("node[3]"), (Names{"node3"}));
  EXPECT_EQ(Expand("[1-2]x"), (Names{"1x", "2x"}));
}

TEST(HostList, ExpandsPdshLists) {
  // pdsh -w: the same syntax; spaces around names, empty items and repeats
  // are forgiven.
  EXPECT_EQ(Expand(" a1 ,b[1-2],,a1, "), (Names{"a1", "b1", "b2"}));
  EXPECT_EQ(Expand(""), Names{});
}

TEST(HostList, RefusesMalformedListsSayingWhere) {
  EXPECT_EQ(ExpandError("node[01-04"), "node[01-04: '[' at column 5 is not closed");
  EXPECT_EQ(ExpandError("node01-04]"), "node01-04]: ']' at column 10 closes no '['");
  EXPECT_EQ(ExpandError("a[1[2]]"),
            "a[1[2]]: '[' at column 2 is not closed (another '[' at column 4)");
  EXPECT_EQ(ExpandError("node[4-1]"), "node[4-1]: range 4-1 at column 6 goes down (write 1-4)");
  EXPECT_EQ(ExpandError("node[]"), "node[]: empty range at column 6 (write [1-4,7])");
  EXPECT_EQ(ExpandError("node[1,,3]"), "node[1,,3]: empty range at column 8 (write [1-4,7])");
  EXPECT_EQ(ExpandError("node[1-]"), "node[1-]: range '1-' at column 6 lacks a bound");
  EXPECT_EQ(ExpandError("node[a-c]"),
            "node[a-c]: 'a' at column 6: a bracket holds numbers and ranges (1-4,7)");
  EXPECT_EQ(ExpandError("node[1-2-3]"),
            "node[1-2-3]: '-' at column 9: a bracket holds numbers and ranges (1-4,7)");
  EXPECT_EQ(ExpandError("node a"),
            "node a: a space at column 5 inside a name (separate names by ',')");
  EXPECT_EQ(ExpandError("n[1-100000000]"), "n[1-100000000]: expands to more than 1000000 hosts");
  EXPECT_EQ(ExpandError("n[1-1000]m[1-1001]"),
            "n[1-1000]m[1-1001]: expands to more than 1000000 hosts");
  EXPECT_EQ(ExpandError("n[1-99999999999999999999]"),
            "n[1-99999999999999999999]: number at column 3 is too large");
  EXPECT_EQ(ExpandHostList("node[").error().code, ErrorCode::kInvalidArgument);
}

TEST(HostList, ParsesMpirunHostfiles) {
  Result<Names> r = ParseHostfile(
      "# the job's nodes\n"
      "node01 slots=8 max_slots=16\n"
      "\n"
      "  node02   slots=8   # a comment\n"
      "node03:4\n"  // MPICH
      "node01 slots=8\n"
      "fe80::1\n"
      "10.0.0.7");
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(*r, (Names{"node01", "node02", "node03", "fe80::1", "10.0.0.7"}));
  Result<Names> bad = ParseHostfile("node01\nslots=4 node02\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().detail, "line 2: 'slots=4' is not a host name (a line is: HOST [slots=N])");
  EXPECT_EQ(*ParseHostfile("# nothing\n\n"), Names{});
}

TEST(HostList, ComesFromAListAndAHostfileTogether) {
  Result<Names> both = JobHostsOf(std::string("a[1-2]"), std::nullopt);
  ASSERT_TRUE(both);
  EXPECT_EQ(*both, (Names{"a1", "a2"}));
  Result<Names> none = JobHostsOf(std::string(","), std::nullopt);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().operation, "host list");
  Result<Names> gone = JobHostsOf(std::nullopt, std::string("/nonexistent/hostfile"));
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().operation, "hostfile");
  EXPECT_EQ(gone.error().detail, "/nonexistent/hostfile: cannot read: No such file or directory");
}

TEST(HostList, MatchesShortAndLongNamesButNotAddresses) {
  EXPECT_TRUE(SameHostName("node01", "node01.cluster"));
  EXPECT_TRUE(SameHostName("node01.cluster", "node01"));
  EXPECT_FALSE(SameHostName("node01.a", "node01.b"));
  EXPECT_FALSE(SameHostName("10.0.0.1", "10.0.0.2"));
  EXPECT_FALSE(SameHostName("10", "10.0.0.2"));
  EXPECT_EQ(HostsNotIn({"node01", "node02.cluster", "node03", "10.0.0.1"},
                       {"node01.cluster", "node02", "10"}),
            (Names{"node03", "10.0.0.1"}));
}

TEST(JobFile, CarriesTheHostList) {
  Snapshot s;
  s.host = "node-a";
  s.taken_at = "2026-11-29T10:00:00Z";
  s.tool = "test";
  s.samples.resize(1);
  const std::string one = SnapshotToText(s);
  const std::string text = JobSnapshotsToText({one}, {"node-a", "node-b"});
  EXPECT_NE(text.find("\"hosts\": [\"node-a\",\"node-b\"],\n \"snapshots\""), std::string::npos)
      << text;
  Result<Names> hosts = JobHostsFromJson(text);
  ASSERT_TRUE(hosts) << hosts.error().detail;
  EXPECT_EQ(*hosts, (Names{"node-a", "node-b"}));
  Result<std::vector<Snapshot>> back = JobSnapshotsFromJson(text);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->size(), 1u);

  EXPECT_EQ(*JobHostsFromJson(JobSnapshotsToText({one})), Names{}) << "written only when known";
  EXPECT_EQ(JobSnapshotsToText({one}).find("hosts"), std::string::npos);
  EXPECT_FALSE(JobHostsFromJson(R"({"format": "qpconnect-job-snapshots", "hosts": 5})"));
  EXPECT_FALSE(JobHostsFromJson(R"({"hosts": ["a", 1], "snapshots": []})"));
  EXPECT_EQ(*JobHostsFromJson(R"({"a": {"hosts": ["x"]}, "hosts": ["a\"b"], "snapshots": []})"),
            Names{"a\"b"});
  EXPECT_EQ(*JobHostsFromJson(R"({"snapshots": [{"hosts": ["x"]}], "hosts": ["late"]})"), Names{})
      << "only the members before the snapshots are read";
}

ObservedSample Sample(double at, uint32_t sq, uint32_t rq) {
  ObservedSample s;
  s.at_seconds = at;
  s.state = "RTS";
  s.sq_psn = sq;
  s.rq_psn = rq;
  s.process_state = "S";
  return s;
}

ObservedQp Qp(uint32_t qpn, uint32_t dest) {
  ObservedQp q;
  q.source = ObservedSource::kSnapshot;
  q.origin = "node-a.json";
  q.host = "node-a";
  q.pid = 811;
  q.comm = "qp-mesh";
  q.device = "rxe0";
  q.port = 1;
  q.qpn = qpn;
  q.dest_qpn = dest;
  q.transport = Transport::kRc;
  q.type_name = "RC";
  q.state = "RTS";
  return q;
}

// node-a's snapshot of a four-rank mesh whose other host, node-b, sent
// nothing: QPs 17 and 18 are a pair on node-a, 19 and 20 point at QPs of
// node-b (in no input), all moving.
Observation HalfAJob() {
  Observation o;
  ObservedHost a;
  a.name = "node-a";
  o.hosts = {a};
  ObservedQp x = Qp(17, 18), y = Qp(18, 17), p = Qp(19, 40), q = Qp(20, 41);
  x.samples = {Sample(0, 100, 500), Sample(1, 200, 600)};
  y.samples = {Sample(0, 500, 100), Sample(1, 600, 200)};
  p.samples = {Sample(0, 300, 700), Sample(1, 400, 800)};
  q.samples = {Sample(0, 900, 1700), Sample(1, 950, 1800)};
  o.qps = {x, y, p, q};
  return o;
}

TEST(JobSummary, NamesTheHostThatSentNoSnapshotAndTheQpsPointingAtIt) {
  Observation o = HalfAJob();
  o.expected_hosts = {"node-a", "node-b"};
  const ObservationVerdict v = JudgeObserved(o);
  const JobSummary s = SummarizeJob(o, v);
  EXPECT_EQ(s.listed_hosts, 2u);
  ASSERT_EQ(s.missing_hosts.size(), 1u);
  EXPECT_EQ(s.missing_hosts[0].host, "node-b");
  EXPECT_EQ(s.missing_hosts[0].pointing_qps, 2u);
  EXPECT_EQ(s.missing_hosts[0].pointing_hosts, 1u);
  EXPECT_EQ(s.errors, v.errors + 1) << "a missing host is an error of the job";
  const std::string text = SummaryText(s);
  const std::string second = text.substr(text.find('\n') + 1);
  EXPECT_EQ(second.substr(0, second.find('\n')),
            "  error: node-b sent no snapshot: 2 QPs on 1 host point at it (by elimination: "
            "no QP in the inputs answers to their rqpn, and node-b is the one listed host that "
            "sent nothing)")
      << text;
  EXPECT_TRUE(s.unlisted_hosts.empty());

  // Every listed host there: nothing missing, nothing unplaced.
  o.expected_hosts = {"node-a"};
  const JobSummary all = SummarizeJob(o, v);
  EXPECT_TRUE(all.missing_hosts.empty());
  EXPECT_EQ(all.unplaced_qps, 0u);
  EXPECT_EQ(all.errors, v.errors);
}

TEST(JobSummary, WithoutAHostListNoHostIsMissing) {
  // The same job without the launcher's list: nothing says node-b exists.
  const Observation o = HalfAJob();
  const ObservationVerdict v = JudgeObserved(o);
  const JobSummary s = SummarizeJob(o, v);
  EXPECT_TRUE(s.missing_hosts.empty());
  EXPECT_EQ(s.errors, v.errors);
  EXPECT_EQ(SummaryText(s).find("sent no snapshot"), std::string::npos);
}

TEST(JobSummary, SeveralHostsMissingShareTheQpsPointingAtThem) {
  Observation o = HalfAJob();
  o.expected_hosts = {"node-a", "node-b", "node-c"};
  const JobSummary s = SummarizeJob(o, JudgeObserved(o));
  ASSERT_EQ(s.missing_hosts.size(), 2u);
  EXPECT_EQ(s.missing_hosts[1].line, "node-c sent no snapshot");
  EXPECT_EQ(s.missing_hosts[1].pointing_qps, 0u) << "not known which of the two";
  EXPECT_EQ(s.unplaced_qps, 2u);
  const std::string text = SummaryText(s);
  EXPECT_NE(text.find("  error: 2 of the 3 listed hosts sent no snapshot: node-b, node-c\n"
                      "  error: 2 QPs on 1 host point at one of the 2 hosts that sent nothing "
                      "(no QP in the inputs answers to their rqpn)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(SummaryText(s, 1).find("sent no snapshot: node-b and 1 more\n"), std::string::npos);
}

TEST(JobSummary, AHostNoListNamesIsNoted) {
  Observation o = HalfAJob();
  o.expected_hosts = {"node-x.cluster"};
  const JobSummary s = SummarizeJob(o, JudgeObserved(o));
  ASSERT_EQ(s.missing_hosts.size(), 1u);
  EXPECT_EQ(s.unlisted_hosts, Names{"node-a"});
  EXPECT_NE(SummaryText(s).find("  note: 1 host sent a snapshot but is not in the job's host list "
                                "(do the names differ? qp-inspect --host NAME): node-a\n"),
            std::string::npos);
}

TEST(JobSummary, AQpWhoseAddressNamesAnObservedPortDoesNotPointAtTheMissingHost) {
  Observation o = HalfAJob();
  o.expected_hosts = {"node-a", "node-b"};
  PortIdentity port;
  port.device = "rxe0";
  port.port = 1;
  port.gids = {GidFromString("::ffff:10.0.0.1").value_or(Gid{})};
  o.hosts[0].ports = {port};
  o.qps[2].dest_gid = port.gids[0];  // QP 19 aims at node-a itself: its peer there is gone
  const JobSummary s = SummarizeJob(o, JudgeObserved(o));
  ASSERT_EQ(s.missing_hosts.size(), 1u);
  EXPECT_EQ(s.missing_hosts[0].pointing_qps, 1u);
}

TEST(JobSummary, AQpAimedAtAQpConnectedElsewherePointsAtTheMissingHost) {
  // QP numbers repeat across hosts: QP 19's peer on node-b is QP 17 there,
  // and node-a's own QP 17 is connected to QP 18. No QP answers to QP 19.
  Observation o = HalfAJob();
  o.expected_hosts = {"node-a", "node-b"};
  o.qps[2].dest_qpn = 17;
  const JobSummary s = SummarizeJob(o, JudgeObserved(o));
  ASSERT_EQ(s.missing_hosts.size(), 1u);
  EXPECT_EQ(s.missing_hosts[0].pointing_qps, 2u);
  for (const JobCulprit& c : s.culprits) {
    EXPECT_NE(c.rule, "rqpn-dangling") << c.line << ": counted in node-b's line instead";
  }
  // Without the list, the judge's finding stands as it is.
  o.expected_hosts.clear();
  const JobSummary alone = SummarizeJob(o, JudgeObserved(o));
  ASSERT_EQ(alone.culprits.size(), 1u) << SummaryText(alone);
  EXPECT_EQ(alone.culprits[0].rule, "rqpn-dangling");
}

TEST(JobSummary, APeerGoneOnTheMissingHostIsBlamedOnIt) {
  // QP 20's peer answers no more (sq_psn frozen, retries rising): with node-b
  // the one host missing, the QPs that do not answer are node-b's (gone, or
  // the host down: not known).
  Observation o = HalfAJob();
  o.expected_hosts = {"node-a", "node-b"};
  o.qps[3].samples = {Sample(0, 900, 1700), Sample(2, 900, 1700)};
  ObservedPortCounters port;
  port.host = "node-a";
  port.device = "rxe0";
  port.port = 1;
  port.interval_seconds = 2;
  port.counters = {{"completer_retry_err", {0, 9}}, {"sent_pkts", {0, 50}}, {"rcvd_pkts", {0, 0}}};
  o.ports = {port};
  const ObservationVerdict v = JudgeObserved(o);
  const JobSummary s = SummarizeJob(o, v);
  bool blamed = false;
  for (const JobCulprit& c : s.culprits) {
    if (c.rule != "peer-qp-gone") continue;
    EXPECT_EQ(c.host, "node-b");
    EXPECT_EQ(c.line,
              "QPs on node-b do not answer: 1 QP on 1 host waits on them (node-b sent no "
              "snapshot: named by elimination) [peer-qp-gone]");
    blamed = true;
  }
  EXPECT_TRUE(blamed) << SummaryText(s);
}

}  // namespace
}  // namespace qpconnect
