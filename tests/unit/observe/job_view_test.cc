// SPDX-License-Identifier: MIT
// The whole-job view: the snapshot file's host identity, job and
// destinations (snapshot_json.h, both readers), the job summary
// (job_summary.h) and the host-by-host matrix (verdict_svg.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "qpconnect/observe/job_summary.h"
#include "qpconnect/observe/judge.h"
#include "qpconnect/observe/netlink.h"
#include "qpconnect/observe/snapshot_json.h"
#include "qpconnect/observe/verdict_svg.h"

namespace qpconnect {
namespace {

Gid G(const char* text) { return GidFromString(text).value_or(Gid{}); }

Snapshot IdentifiedSnapshot() {
  Snapshot s;
  s.host = "node-37";
  s.taken_at = "2026-11-27T06:00:00Z";
  s.tool = "test";
  s.job = "train-42";
  PortIdentity p;
  p.device = "mlx5_0";
  p.port = 1;
  p.link_layer = "InfiniBand";
  p.lid = 12;
  p.lmc = 1;
  p.sm_lid = 1;
  p.subnet_prefix = 0xfe80000000000000ull;
  p.gids = {G("fe80::1"), G("::ffff:10.0.0.37")};
  s.identity = {p};
  s.started_epoch = 1800000000.25;
  KernelSample a;
  KernelQp q;
  q.device = "mlx5_0";
  q.port = 1;
  q.lqpn = 300;
  q.rqpn = 301;
  q.type = "RC";
  q.state = "RTS";
  q.sq_psn = 10;
  q.rq_psn = 20;
  q.pid = 4411;
  q.comm = "python";
  q.process_state = "T";
  q.dgid = G("::ffff:10.0.0.2");
  q.dlid = 7;
  a.qps = {q};
  a.ports = {{"mlx5_0", 1, {{"duplicate_request", 3}, {"out_of_buffer", 9}}}};
  KernelSample b = a;
  b.at_seconds = 1;
  s.samples = {a, b};
  return s;
}

TEST(SnapshotFile, CarriesTheHostIdentityJobAndDestinations) {
  const Snapshot s = IdentifiedSnapshot();
  const std::string text = SnapshotToText(s);
  EXPECT_NE(text.find("\"num_qps\": 1"), std::string::npos);
  EXPECT_EQ(SnapshotHeadQps(text), 1u);
  EXPECT_NE(text.find("\"job\": \"train-42\""), std::string::npos);
  EXPECT_NE(text.find("\"subnet_prefix\":\"0xfe80000000000000\""), std::string::npos);
  EXPECT_NE(text.find("\"link_layer\":\"InfiniBand\",\"lid\":12,\"lmc\":1,\"sm_lid\":1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"started_epoch\": 1800000000.25"), std::string::npos) << text;
  EXPECT_NE(text.find("\"dgid\":\"::ffff:10.0.0.2\",\"dlid\":7"), std::string::npos);
  Result<Snapshot> back = SnapshotFromJson(text);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, s);
}

TEST(SnapshotFile, BothReadersAgree) {
  // A note with an escape sends the one-pass reader back to the JSON tree;
  // the two must read the same snapshot.
  Snapshot s = IdentifiedSnapshot();
  const std::string plain = SnapshotToText(s);
  s.notes = {"a \"quoted\" note"};
  const std::string escaped = SnapshotToText(s);
  Result<Snapshot> fast = SnapshotFromJson(plain);
  Result<Snapshot> tree = SnapshotFromJson(escaped);
  ASSERT_TRUE(fast);
  ASSERT_TRUE(tree) << tree.error().ToString();
  Snapshot t = *tree;
  t.notes.clear();
  EXPECT_EQ(*fast, t);
  EXPECT_EQ(tree->notes, s.notes);
}

TEST(SnapshotFile, OlderFilesWithoutIdentityStillRead) {
  const std::string old =
      "{\"format\": \"qpconnect-snapshot\", \"version\": 1, \"tool\": \"t\", \"host\": \"h\",\n"
      " \"taken_at\": \"\", \"interval_seconds\": 0, \"notes\": [], \"samples\": [\n"
      "  {\"at_seconds\": 0.0, \"qps\": [{\"device\":\"rxe0\",\"port\":1,\"lqpn\":17,"
      "\"rqpn\":17,\"type\":\"RC\",\"state\":\"RTS\",\"sq_psn\":1,\"rq_psn\":2,"
      "\"path_mig_state\":\"\",\"pid\":5,\"comm\":\"x\",\"process_state\":\"S\"}], \"ports\": "
      "[]}]}";
  Result<Snapshot> s = SnapshotFromJson(old);
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_TRUE(s->identity.empty());
  EXPECT_TRUE(s->job.empty());
  EXPECT_EQ(s->started_epoch, 0);
  EXPECT_FALSE(s->samples[0].qps[0].dgid);
  EXPECT_EQ(SnapshotHeadQps(old), 0u);
}

TEST(SnapshotFile, AFaultIsStillNamedByItsField) {
  Snapshot s = IdentifiedSnapshot();
  std::string text = SnapshotToText(s);
  text.replace(text.find("\"lqpn\":300"), 10, "\"lqpn\":-30");
  Result<Snapshot> bad = SnapshotFromJson(text);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().attribute, "samples[0].qps[0].lqpn");
}

TEST(SnapshotFile, TheHostIdentityIsReadFromSysfs) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("job_view_sysfs_" + std::to_string(::getpid()));
  const fs::path port = root / "class/infiniband/mlx5_0/ports/1";
  fs::create_directories(port / "gids");
  std::ofstream(port / "link_layer") << "InfiniBand\n";
  std::ofstream(port / "lid") << "0xc\n";
  std::ofstream(port / "lid_mask_count") << "1\n";
  std::ofstream(port / "sm_lid") << "0x1\n";
  std::ofstream(port / "gids/0") << "fe80:0000:0000:0000:0202:c9ff:fe01:0203\n";
  std::ofstream(port / "gids/12") << "fe80:0000:0000:0000:0202:c9ff:fe01:0204\n";
  std::ofstream(port / "gids/1") << "0000:0000:0000:0000:0000:ffff:0a00:0025\n";
  std::ofstream(port / "gids/2") << "0000:0000:0000:0000:0000:0000:0000:0000\n";
  const PortIdentity id = kernel::ReadSysfsPortIdentity("mlx5_0", 1, root.string());
  const PortIdentity none = kernel::ReadSysfsPortIdentity("mlx5_9", 1, root.string());
  fs::remove_all(root);
  EXPECT_EQ(id.device, "mlx5_0");
  EXPECT_EQ(id.port, 1);
  EXPECT_EQ(id.link_layer, "InfiniBand");
  EXPECT_EQ(id.lid, 12);
  EXPECT_EQ(id.lmc, 1);
  EXPECT_EQ(id.sm_lid, 1);
  EXPECT_EQ(id.subnet_prefix, 0xfe80000000000000ull);
  EXPECT_EQ(id.gids, (std::vector<Gid>{G("fe80::202:c9ff:fe01:203"), G("::ffff:10.0.0.37"),
                                       G("fe80::202:c9ff:fe01:204")}))
      << "the zero entry is left out; the others in index order (12 after 1)";
  EXPECT_TRUE(none.gids.empty());
  EXPECT_TRUE(none.link_layer.empty());
}

ObservedSample Sample(double at, uint32_t sq, uint32_t rq, const std::string& process) {
  ObservedSample s;
  s.at_seconds = at;
  s.state = "RTS";
  s.sq_psn = sq;
  s.rq_psn = rq;
  s.process_state = process;
  return s;
}

ObservedQp Qp(const std::string& host, uint32_t qpn, uint32_t dest, int pid) {
  ObservedQp q;
  q.source = ObservedSource::kSnapshot;
  q.origin = host + ".json";
  q.host = host;
  q.pid = pid;
  q.comm = "python";
  q.device = "mlx5_0";
  q.port = 1;
  q.qpn = qpn;
  q.dest_qpn = dest;
  q.transport = Transport::kRc;
  q.type_name = "RC";
  q.state = "RTS";
  return q;
}

ObservedHost Host(const std::string& name, int n) {
  ObservedHost h;
  h.name = name;
  PortIdentity p;
  p.device = "mlx5_0";
  p.port = 1;
  p.gids = {G(("::ffff:10.0.0." + std::to_string(n)).c_str())};
  h.ports = {p};
  return h;
}

// pid 4411 (python) on node-37 is stopped; its three QPs (all QP 300 .. 302
// on every host, as jobs create them) are connected to node-1, -2 and -3,
// whose sends stay outstanding. node-1 and node-2 also share a healthy pair.
Observation StoppedJob() {
  Observation o;
  o.hosts = {Host("node-37", 37), Host("node-1", 1), Host("node-2", 2), Host("node-3", 3)};
  for (int k = 0; k < 3; ++k) {
    const std::string peer = "node-" + std::to_string(k + 1);
    ObservedQp s = Qp("node-37", 300, 400, 4411);
    s.qpn = 300 + static_cast<uint32_t>(k);
    s.dest_qpn = 400;
    s.dest_gid = G(("::ffff:10.0.0." + std::to_string(k + 1)).c_str());
    s.samples = {Sample(0, 1000, 2000, "T"), Sample(1, 1000, 2000, "T")};
    ObservedQp p = Qp(peer, 400, s.qpn, 5000);
    p.dest_gid = G("::ffff:10.0.0.37");
    p.samples = {Sample(0, 2030, 1000, "S"), Sample(1, 2030, 1000, "S")};
    o.qps.push_back(s);
    o.qps.push_back(p);
  }
  ObservedQp a = Qp("node-1", 500, 501, 5000);
  a.dest_gid = G("::ffff:10.0.0.2");
  a.samples = {Sample(0, 70, 80, "S"), Sample(1, 170, 180, "S")};
  ObservedQp b = Qp("node-2", 501, 500, 5000);
  b.dest_gid = G("::ffff:10.0.0.1");
  b.samples = {Sample(0, 80, 70, "S"), Sample(1, 180, 170, "S")};
  o.qps.push_back(a);
  o.qps.push_back(b);
  return o;
}

TEST(JobSummary, NamesTheStoppedProcessAndWhoWaitsOnIt) {
  const Observation o = StoppedJob();
  const ObservationVerdict v = JudgeObserved(o);
  const JobSummary s = SummarizeJob(o, v);
  EXPECT_EQ(s.hosts, 4u);
  EXPECT_EQ(s.pairs, 4u);
  EXPECT_EQ(s.sound_pairs, 1u);
  ASSERT_EQ(s.culprits.size(), 1u);
  EXPECT_EQ(s.culprits[0].line,
            "pid 4411 (python) on node-37 is stopped: 3 QPs on 3 hosts wait on it "
            "[receiver-not-ready]");
  EXPECT_EQ(s.stuck_hosts, (std::vector<std::string>{"node-37"}));
  const std::string text = SummaryText(s);
  EXPECT_EQ(text.rfind("verdict: 4 hosts, 8 QPs, 4 pairs (1 sound, 3 not sound); 3 errors", 0), 0u)
      << text;
  EXPECT_NE(text.find("  error: pid 4411 (python) on node-37 is stopped: 3 QPs on 3 hosts"),
            std::string::npos);
  EXPECT_NE(text.find("by rule: receiver-not-ready 3"), std::string::npos);
  EXPECT_NE(text.find("by host (findings naming its QPs): node-37 3,"), std::string::npos);
}

TEST(JobSummary, AHealthyJobHasNoCulprit) {
  Observation o = StoppedJob();
  o.qps.erase(o.qps.begin(), o.qps.begin() + 6);
  const ObservationVerdict v = JudgeObserved(o);
  const JobSummary s = SummarizeJob(o, v);
  EXPECT_TRUE(s.culprits.empty());
  EXPECT_NE(SummaryText(s).find("no process or host is at fault"), std::string::npos);
}

// Without destinations: pid 7 on node-4 was killed with its QP 400, which
// node-1's QP 300 still retries towards. The three QPs 400 there are (on
// node-1, -2, -3) are paired with other QPs 300; node-4 is the only host
// given without a QP 400.
Observation KilledJobWithoutDestinations() {
  Observation o;
  o.hosts = {Host("node-1", 1), Host("node-2", 2), Host("node-3", 3), Host("node-4", 4)};
  ObservedQp survivor = Qp("node-1", 300, 400, 5000);
  survivor.samples = {Sample(0, 9000000, 12000000, "S"), Sample(1, 9000000, 12000000, "S")};
  o.qps.push_back(survivor);
  const std::pair<const char*, const char*> pairs[] = {
      {"node-2", "node-1"}, {"node-3", "node-2"}, {"node-4", "node-3"}};
  uint32_t base = 1000000;
  for (const auto& [a_host, b_host] : pairs) {
    ObservedQp a = Qp(a_host, 300, 400, 5001);
    a.samples = {Sample(0, base, base + 500000, "S"), Sample(1, base, base + 500000, "S")};
    ObservedQp b = Qp(b_host, 400, 300, 5001);
    b.samples = {Sample(0, base + 500000, base, "S"), Sample(1, base + 500000, base, "S")};
    o.qps.push_back(a);
    o.qps.push_back(b);
    base += 1000000;
  }
  ObservedPortCounters port;
  port.host = "node-1";
  port.device = "mlx5_0";
  port.port = 1;
  port.interval_seconds = 1;
  port.counters = {{"local_ack_timeout_err", {3, 9}}};
  o.ports = {port};
  return o;
}

TEST(JobSummary, NamesAKilledProcesssHostByEliminationWithoutDestinations) {
  const Observation o = KilledJobWithoutDestinations();
  const ObservationVerdict v = JudgeObserved(o);
  EXPECT_EQ(v.pairing.pairs.size(), 3u);
  EXPECT_TRUE(v.pairing.ambiguous.empty());
  ASSERT_EQ(v.live.findings.size(), 1u);
  const LiveFinding& f = v.live.findings[0];
  EXPECT_EQ(f.finding.id, "peer-qp-gone");
  EXPECT_EQ(f.qp, 0u);
  ASSERT_FALSE(f.evidence.empty());
  EXPECT_EQ(f.evidence[0],
            "dangling by elimination: all 3 QPs numbered 400 that name it back are paired "
            "elsewhere; by elimination too, its peer was on node-4, the only host given that "
            "holds no QP numbered 400");
  const JobSummary s = SummarizeJob(o, v);
  ASSERT_EQ(s.culprits.size(), 1u);
  EXPECT_EQ(s.culprits[0].line,
            "QPs on node-4 no longer exist (killed or exited): 1 QP on 1 host waits on them "
            "(named by elimination: the only host given without QPs numbered as they name) "
            "[peer-qp-gone]");
}

// The same job with a fifth host listed that sent no snapshot: the gone peer
// may be on it, so elimination names no host of its own; the summary names
// the silent host the QP points at.
TEST(JobSummary, EliminationNamesNoHostWhileAListedHostSentNothing) {
  Observation o = KilledJobWithoutDestinations();
  o.expected_hosts = {"node-1", "node-2", "node-3", "node-4", "node-5"};
  const ObservationVerdict v = JudgeObserved(o);
  ASSERT_EQ(v.live.findings.size(), 1u);
  const LiveFinding& f = v.live.findings[0];
  EXPECT_EQ(f.finding.id, "peer-qp-gone");
  ASSERT_FALSE(f.evidence.empty());
  EXPECT_EQ(f.evidence[0],
            "dangling by elimination: all 3 QPs numbered 400 that name it back are paired "
            "elsewhere");
  const JobSummary s = SummarizeJob(o, v);
  ASSERT_FALSE(s.culprits.empty());
  EXPECT_EQ(s.culprits[0].host, "node-5");
  EXPECT_EQ(s.culprits[0].line.find("node-4"), std::string::npos) << s.culprits[0].line;
}

// Well-formed XML, as far as SVG text needs: every tag closed in order,
// attributes quoted, no bare '<' or '&' in text.
::testing::AssertionResult WellFormed(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  if (xml.rfind("<?xml ", 0) != 0) return ::testing::AssertionFailure() << "no XML declaration";
  i = xml.find("?>") + 2;
  bool root_closed = false;
  while (i < xml.size()) {
    const size_t lt = xml.find('<', i);
    const std::string text = xml.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    for (size_t a = text.find('&'); a != std::string::npos; a = text.find('&', a + 1)) {
      const size_t semi = text.find(';', a);
      const std::string entity = text.substr(a, semi == std::string::npos ? 1 : semi - a + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;") {
        return ::testing::AssertionFailure() << "bare & at " << i + a;
      }
    }
    if (lt == std::string::npos) break;
    if (root_closed) return ::testing::AssertionFailure() << "content after the root at " << lt;
    const size_t gt = xml.find('>', lt);
    if (gt == std::string::npos) return ::testing::AssertionFailure() << "unclosed tag at " << lt;
    std::string tag = xml.substr(lt + 1, gt - lt - 1);
    if (tag.find('<') != std::string::npos) return ::testing::AssertionFailure() << "< in a tag";
    size_t quotes = 0;
    for (char c : tag) quotes += c == '"';
    if (quotes % 2 != 0) return ::testing::AssertionFailure() << "unbalanced quotes: " << tag;
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) {
        return ::testing::AssertionFailure()
               << "</" << name << "> closes " << (open.empty() ? "nothing" : open.back());
      }
      open.pop_back();
      root_closed = open.empty();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
    i = gt + 1;
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> not closed";
  if (!root_closed) return ::testing::AssertionFailure() << "no root element";
  return ::testing::AssertionSuccess();
}

TEST(VerdictMatrix, IsWellFormedSvgWithTheStuckHostStandingOut) {
  const Observation o = StoppedJob();
  const ObservationVerdict v = JudgeObserved(o);
  const JobSummary s = SummarizeJob(o, v);
  const std::string svg = VerdictMatrixSvg(o, v, s);
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  // Its row and its column are banded, its name in red and bold.
  EXPECT_NE(svg.find("class=\"stuck-row\" data-host=\"node-37\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"stuck-column\" data-host=\"node-37\""), std::string::npos);
  EXPECT_EQ(svg.find("data-host=\"node-1\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#d9302c\" font-weight=\"bold\">node-37</text>"), std::string::npos);
  // Hosts in name order: node-1, node-2, node-3, node-37; 16-pixel cells
  // from (130, 150). node-37's row has red cells toward node-1 .. node-3
  // (one run of three), node-1's row a green one toward node-2.
  EXPECT_NE(svg.find("<rect x=\"130\" y=\"198\" width=\"48\" height=\"16\" fill=\"#d9302c\"/>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<rect x=\"146\" y=\"150\" width=\"16\" height=\"16\" fill=\"#5cb85c\"/>"),
            std::string::npos);
  EXPECT_TRUE(WellFormed(VerdictMatrixSvg(Observation{}, ObservationVerdict{}, JobSummary{})));
}

TEST(VerdictMatrix, EscapesHostNames) {
  Observation o = StoppedJob();
  for (ObservedQp& q : o.qps) {
    if (q.host == "node-37") q.host = "a<b&c";
  }
  o.hosts[0].name = "a<b&c";
  const ObservationVerdict v = JudgeObserved(o);
  const std::string svg = VerdictMatrixSvg(o, v, SummarizeJob(o, v));
  EXPECT_TRUE(WellFormed(svg));
  EXPECT_NE(svg.find("a&lt;b&amp;c"), std::string::npos);
}

}  // namespace
}  // namespace qpconnect
