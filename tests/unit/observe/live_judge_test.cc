// SPDX-License-Identifier: MIT
// The live judge beyond one fixture per rule: healthy, idle and one-sample
// pairs; what each finding names (both QPs with pid and command, both values,
// the evidence); peers in no input; pairs the judge leaves to the validator.
#include <gtest/gtest.h>

#include <string>

#include "live_fixtures.h"
#include "qpconnect/observe/live_judge.h"

namespace qpconnect::test {
namespace {

const LiveFinding* FindId(const LiveReport& r, const std::string& id) {
  for (const LiveFinding& f : r.findings) {
    if (f.finding.id == id) return &f;
  }
  return nullptr;
}

bool EvidenceHas(const LiveFinding& f, const std::string& text) {
  for (const std::string& e : f.evidence) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(JudgeLive, MovingPairIsSoundAndSaysSo) {
  for (Transport t : {Transport::kRc, Transport::kUc}) {
    const LiveReport r = JudgeAll(HealthyPair(t));
    EXPECT_TRUE(r.findings.empty()) << LiveDump(r);
    ASSERT_EQ(r.pairs.size(), 1u);
    EXPECT_TRUE(r.pairs[0].sound);
    EXPECT_EQ(r.pairs[0].progress.rfind("moving", 0), 0u) << r.pairs[0].progress;
    EXPECT_NE(r.pairs[0].progress.find("sent +100"), std::string::npos) << r.pairs[0].progress;
  }
}

TEST(JudgeLive, IdlePairIsSound) {
  const LiveReport r = JudgeAll(FrozenPair(1000, 1000));
  EXPECT_TRUE(r.findings.empty()) << LiveDump(r);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].progress.rfind("idle", 0), 0u) << r.pairs[0].progress;
}

TEST(JudgeLive, ReceiverAheadNamesBothQpsValuesAndDuplicates) {
  const LiveReport r = JudgeAll(LiveViolations().at("psn-receiver-ahead")());
  const LiveFinding* f = FindId(r, "psn-receiver-ahead");
  ASSERT_NE(f, nullptr) << LiveDump(r);
  EXPECT_EQ(f->qp, 1u);  // the receiver
  EXPECT_EQ(f->peer, 0u);
  EXPECT_EQ(f->finding.local_value, "rq_psn 2681266");
  EXPECT_EQ(f->finding.remote_value, "sq_psn 2680267");
  for (const char* s : {"pid 200 client", "pid 100 server", "999 ahead", "duplicate"}) {
    EXPECT_NE(f->finding.message.find(s), std::string::npos) << s << ": " << f->finding.message;
  }
  EXPECT_TRUE(EvidenceHas(*f, "duplicate_request +57 on rxe1 port 1")) << LiveDump(r);
  EXPECT_TRUE(EvidenceHas(*f, "completer_retry_err +56 on rxe0 port 1")) << LiveDump(r);
  EXPECT_TRUE(EvidenceHas(*f, "rq_psn frozen at 2681266")) << LiveDump(r);
  EXPECT_FALSE(r.pairs[0].sound);
}

TEST(JudgeLive, ReceiverAheadInOneSampleNeedsMoreThanARaceCanExplain) {
  Observation o = FrozenPair(2680267, 2681266);
  for (ObservedQp& q : o.qps) q.samples.erase(q.samples.begin());
  for (ObservedPortCounters& p : o.ports) p.interval_seconds = 0;
  LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"psn-receiver-ahead"}) << LiveDump(r);
  EXPECT_NE(r.pairs[0].progress.find("one sample"), std::string::npos);

  o.qps[1].samples[0].rq_psn = 2680267 + 3;  // three packets sent between the two reads
  r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
}

TEST(JudgeLive, SamplesTooCloseTogetherAreJudgedAsOne) {
  // Packets outstanding and nothing accepted, but only 10 ms apart.
  Observation o = LiveViolations().at("psn-stalled")();
  for (ObservedQp& q : o.qps) q.samples.back().at_seconds = 0.01;
  for (ObservedPortCounters& p : o.ports) p.interval_seconds = 0.01;
  LiveReport r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
  // A far-off PSN is still a mismatch, as with one sample.
  o = FrozenPair(200000, 1000);
  for (ObservedQp& q : o.qps) q.samples.back().at_seconds = 0.01;
  r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"psn-sender-ahead"}) << LiveDump(r);
}

TEST(JudgeLive, ReceiverAheadButAcceptingIsNotJudged) {
  // rq_psn moves: whatever the reads' order, the receiver takes packets.
  Observation o = FrozenPair(1000, 1003);
  o.qps[1].samples.back().rq_psn = 1010;
  o.qps[0].samples.back().sq_psn = 1008;
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
}

TEST(JudgeLive, PsnRulesAreRcOnly) {
  for (uint32_t b_rq : {1999u, 1000u - 10u}) {
    const LiveReport r = JudgeAll(FrozenPair(1000, b_rq, Transport::kUc));
    EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
  }
}

TEST(JudgeLive, SenderAheadByTheNakLoopEvenWhenTheGapIsSmall) {
  Observation o = FrozenPair(1020, 1000);
  Rise(o, "rxe1", "out_of_seq_request", 9);
  Rise(o, "rxe0", "rcvd_seq_err", 9);
  const LiveReport r = JudgeAll(o);
  const LiveFinding* f = FindId(r, "psn-sender-ahead");
  ASSERT_NE(f, nullptr) << LiveDump(r);
  EXPECT_EQ(f->qp, 0u);
  EXPECT_TRUE(EvidenceHas(*f, "out_of_seq_request +9 on rxe1 port 1")) << LiveDump(r);
  EXPECT_TRUE(EvidenceHas(*f, "rcvd_seq_err +9 on rxe0 port 1")) << LiveDump(r);
  EXPECT_EQ(LiveProblems(r).size(), 1u) << LiveDump(r);
}

TEST(JudgeLive, SequenceErrorsOnOnePortAloneAreNotAMismatch) {
  Observation o = FrozenPair(1020, 1000);
  Rise(o, "rxe1", "out_of_seq_request", 9);  // any QP of rxe1 may have caused it
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
}

TEST(JudgeLive, ASlowSenderThatDoesNotRetryIsNotStalled) {
  // As with 2000 busy QPs under emulation: a QP is starved for a second.
  const LiveReport r = JudgeAll(FrozenPair(1010, 1000));
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].progress.rfind("stuck", 0), 0u) << r.pairs[0].progress;
}

TEST(JudgeLive, SenderAheadAcrossThePsnWrap) {
  Observation o = FrozenPair(0x000100, 0xFF0000);  // 0x10100 ahead across 2^24
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"psn-sender-ahead"}) << LiveDump(r);
}

TEST(JudgeLive, StoppedReceiverIsNamedWithPidAndCommand) {
  const LiveReport r = JudgeAll(LiveViolations().at("receiver-not-ready")());
  const LiveFinding* f = FindId(r, "receiver-not-ready");
  ASSERT_NE(f, nullptr) << LiveDump(r);
  EXPECT_EQ(f->qp, 1u);
  EXPECT_NE(f->finding.message.find("receiver not ready: pid 200 (client) is stopped"),
            std::string::npos)
      << f->finding.message;
  EXPECT_TRUE(EvidenceHas(*f, "send_rnr_err +40 on rxe1")) << LiveDump(r);
  EXPECT_TRUE(EvidenceHas(*f, "rcvd_rnr_err +40 on rxe0")) << LiveDump(r);
  EXPECT_NE(f->finding.fix.find("kill -CONT 200"), std::string::npos) << f->finding.fix;
}

TEST(JudgeLive, StoppedReceiverStillUsingUpItsReceivesIsNotReady) {
  // As measured in the lab: ib_send_bw's receiver stopped a second ago; the
  // kernel still fills the receives it posted, and RNR NAKs start.
  Observation o = HealthyPair();
  o.qps[0].samples.back().process_state = "T";
  Rise(o, "rxe0", "send_rnr_err", 18);
  Rise(o, "rxe1", "rcvd_rnr_err", 18);
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"receiver-not-ready"}) << LiveDump(r);
  const LiveFinding* f = FindId(r, "receiver-not-ready");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->qp, 0u);
  EXPECT_NE(f->finding.message.find("receiver not ready: pid 100 (server) is stopped"),
            std::string::npos)
      << f->finding.message;
  EXPECT_TRUE(EvidenceHas(*f, "rq_psn still moves (+100 in 1.0 s)")) << LiveDump(r);
}

TEST(JudgeLive, TheLabsStoppedSendBwReceiverAsMeasured) {
  // ib_send_bw's server stays in RTR (sq_psn 0, it never sends); the client
  // went back 7 PSNs to retransmit after RNR NAKs.
  Observation o = HealthyPair();
  o.qps[0].state = "RTR";
  o.qps[0].samples = {Sample(0, "RTR", 0, 12959705, "T"), Sample(1, "RTR", 0, 12959705, "T")};
  o.qps[1].samples = {Sample(0, "RTS", 12959770, 2901180, "R"),
                      Sample(1, "RTS", 12959763, 2901180, "R")};
  Rise(o, "rxe0", "send_rnr_err", 125);
  Rise(o, "rxe1", "rcvd_rnr_err", 125);
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"receiver-not-ready"}) << LiveDump(r);
  ASSERT_EQ(r.pairs.size(), 1u);
  const std::string& p = r.pairs[0].progress;
  EXPECT_EQ(p.rfind("stuck: packets outstanding", 0), 0u) << p;
  EXPECT_NE(p.find("sent -7"), std::string::npos) << p;
  EXPECT_NE(p.find("went back to retransmit"), std::string::npos) << p;
}

TEST(JudgeLive, RnrWhileTrafficMovesIsNotJudged) {
  Observation o = HealthyPair();
  Rise(o, "rxe0", "send_rnr_err", 18);
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
}

TEST(JudgeLive, ReceiverAheadWhosePortCannotSendSaysItsAcksAreLost) {
  // The busy-pairs benchmark at its collapse: the receiver accepted the
  // packets, its port's send_err rose by thousands, the sender went back to
  // resend them (go-back-N), 65 PSNs behind.
  Observation o = FrozenPair(3811276, 3811341);
  o.qps[0].samples.back().sq_psn = 3811211;
  Rise(o, "rxe1", "send_err", 6872);
  Rise(o, "rxe1", "duplicate_request", 7023);
  Rise(o, "rxe0", "completer_retry_err", 407);
  const LiveReport r = JudgeAll(o);
  const LiveFinding* f = FindId(r, "psn-receiver-ahead");
  ASSERT_NE(f, nullptr) << LiveDump(r);
  EXPECT_NE(f->finding.message.find("its ACKs are lost"), std::string::npos) << LiveDump(r);
  EXPECT_NE(f->finding.fix.find("cannot send (send_err)"), std::string::npos) << LiveDump(r);
  EXPECT_TRUE(EvidenceHas(*f, "send_err +6872 on rxe1 port 1")) << LiveDump(r);
  // Without the send errors: the PSN mismatch it was.
  const LiveReport plain = JudgeAll(LiveViolations().at("psn-receiver-ahead")());
  const LiveFinding* g = FindId(plain, "psn-receiver-ahead");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->finding.fix.find("Set the receiver's rq_psn"), std::string::npos);
}

TEST(JudgeLive, CountersThatDidNotRiseAreStillNamedAsTotals) {
  // The lab's pingpong with rq_psn shifted: four duplicates at the start, then
  // both sides wait; nothing rises during the interval.
  Observation o = FrozenPair(15983640, 15984635);
  for (ObservedPortCounters& p : o.ports) {
    for (auto& [name, v] : p.counters) {
      if (name == "duplicate_request" && p.device == "rxe1") v = {4, 4};
    }
  }
  const LiveReport r = JudgeAll(o);
  const LiveFinding* f = FindId(r, "psn-receiver-ahead");
  ASSERT_NE(f, nullptr) << LiveDump(r);
  EXPECT_TRUE(EvidenceHas(*f, "duplicate_request 4 on rxe1 port 1, unchanged in 1.0 s"))
      << LiveDump(r);
}

TEST(JudgeLive, RnrWithARunningReceiverIsStillNotReady) {
  Observation o = FrozenPair(1128, 1000);
  Rise(o, "rxe1", "send_rnr_err", 3);
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"receiver-not-ready"}) << LiveDump(r);
}

TEST(JudgeLive, StoppedReceiverInOneSample) {
  Observation o = FrozenPair(1128, 1000);
  for (ObservedQp& q : o.qps) q.samples.erase(q.samples.begin());
  o.qps[1].samples[0].process_state = "T";
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"receiver-not-ready"}) << LiveDump(r);
}

TEST(JudgeLive, PeerInNoInputIsGoneWhenTheSurvivorRetries) {
  Observation o = FrozenPair(1010, 1000);
  o.qps.pop_back();
  Rise(o, "rxe0", "completer_retry_err", 30);
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"peer-qp-gone"}) << LiveDump(r);
  const LiveFinding* f = FindId(r, "peer-qp-gone");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->peer);
  EXPECT_NE(f->finding.message.find("the peer QP no longer exists"), std::string::npos);
  EXPECT_TRUE(EvidenceHas(*f, "completer_retry_err +30")) << LiveDump(r);
}

// The lab's killed ib_send_bw receiver: the survivor retransmits go-back-N,
// so its second sample may show sq_psn back (here by 46) or forward.
TEST(JudgeLive, PeerInNoInputIsGoneWhenTheSurvivorGoesBackToRetransmit) {
  Observation o = FrozenPair(1010, 1000);
  o.qps.pop_back();
  o.qps[0].samples.back().sq_psn = 1010 - 46;
  Rise(o, "rxe0", "completer_retry_err", 15);
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"peer-qp-gone"}) << LiveDump(r);
  const LiveFinding* f = FindId(r, "peer-qp-gone");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(EvidenceHas(*f, "sq_psn went back from 1010 to 964")) << LiveDump(r);
}

TEST(JudgeLive, PeerInNoInputIsGoneWhenTheSurvivorsPortHearsNothing) {
  Observation o = FrozenPair(1010, 1000);
  o.qps.pop_back();
  o.qps[0].samples.back().sq_psn = 1010 + 40;  // mid-retransmission, ahead
  Rise(o, "rxe0", "completer_retry_err", 15);
  Rise(o, "rxe0", "sent_pkts", 1899);
  const LiveReport r = JudgeAll(o);
  EXPECT_EQ(LiveProblems(r), std::set<std::string>{"peer-qp-gone"}) << LiveDump(r);
  const LiveFinding* f = FindId(r, "peer-qp-gone");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(EvidenceHas(*f, "sent_pkts +1899 and rcvd_pkts +0")) << LiveDump(r);
}

// The lab's stopped rank whose peer is on a host that sent no snapshot: its
// sq_psn is frozen because its process posts nothing, and the port's retries
// are other QPs'. Not evidence that the peer is gone.
TEST(JudgeLive, PeerInNoInputIsOnlyANoteWhenTheSurvivorsProcessIsStopped) {
  Observation o = FrozenPair(1010, 1000);
  o.qps.pop_back();
  for (ObservedSample& s : o.qps[0].samples) s.process_state = "T";
  Rise(o, "rxe0", "completer_retry_err", 30);
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).count("peer-qp-gone") == 0) << LiveDump(r);
}

// Moving forward while its port hears ACKs: a live peer on a host not given.
TEST(JudgeLive, PeerInNoInputIsOnlyANoteWhileTheSurvivorAdvancesAndHearsBack) {
  Observation o = FrozenPair(1010, 1000);
  o.qps.pop_back();
  o.qps[0].samples.back().sq_psn = 1010 + 40;
  Rise(o, "rxe0", "completer_retry_err", 15);
  Rise(o, "rxe0", "sent_pkts", 1899);
  Rise(o, "rxe0", "rcvd_pkts", 1800);
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
}

TEST(JudgeLive, PeerInNoInputIsOnlyANoteWithoutRetries) {
  Observation o = HealthyPair();
  o.qps.pop_back();
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(LiveProblems(r).empty()) << LiveDump(r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(r.findings[0].finding.unchecked);
  EXPECT_EQ(r.findings[0].finding.id, "peer-qp-gone");
}

TEST(JudgeLive, ManyPeersInNoInputAreSummedUp) {
  Observation o;
  for (uint32_t i = 0; i < 40; ++i) {
    ObservedQp q = LiveQp("rxe0", 100 + i, 5000 + i, 100, "server");
    q.samples = {Sample(0, "RTS", 1, 1)};
    o.qps.push_back(q);
  }
  const LiveReport r = JudgeAll(o);
  ASSERT_EQ(r.findings.size(), 17u) << LiveDump(r);
  EXPECT_EQ(r.findings.back().finding.more_qps, 24u);
}

TEST(JudgeLive, BothSidesGoneIsNotAHang) {
  Observation o = HealthyPair();
  for (ObservedQp& q : o.qps) {
    q.samples.pop_back();
    q.destroyed = true;
  }
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(r.findings.empty()) << LiveDump(r);
}

TEST(JudgeLive, DanglingDoesNotTaintTheSoundPair) {
  const LiveReport r = JudgeAll(LiveViolations().at("rqpn-dangling")());
  ASSERT_EQ(r.pairs.size(), 1u) << LiveDump(r);
  EXPECT_TRUE(r.pairs[0].sound);
  const LiveFinding* f = FindId(r, "rqpn-dangling");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->qp, 2u);
  EXPECT_NE(f->finding.message.find("pid 300 intruder"), std::string::npos);
}

TEST(JudgeLive, PairsWithoutASnapshotSideAreLeftToTheValidator) {
  Observation o = LiveViolations().at("qp-error-state")();
  for (ObservedQp& q : o.qps) q.source = ObservedSource::kTrace;
  const LiveReport r = JudgeAll(o);
  EXPECT_TRUE(r.findings.empty()) << LiveDump(r);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_NE(r.pairs[0].progress.find("not judged"), std::string::npos);
}

TEST(JudgeLive, ErrorsComeBeforeWarnings) {
  Observation o = LiveViolations().at("process-stopped")();
  Observation bad = LiveViolations().at("qp-error-state")();
  for (ObservedQp& q : bad.qps) {
    q.qpn += 100;
    q.dest_qpn = *q.dest_qpn + 100;
    o.qps.push_back(q);
  }
  const LiveReport r = JudgeAll(o);
  ASSERT_EQ(r.findings.size(), 2u) << LiveDump(r);
  EXPECT_EQ(r.findings[0].finding.severity, Severity::kError);
  EXPECT_EQ(r.findings[1].finding.severity, Severity::kWarning);
}

TEST(DescribeObservedQp, NamesHostDevicePidAndCommand) {
  ObservedQp q = LiveQp("rxe0", 17, 17, 811, "ibv_rc_pingpong");
  EXPECT_EQ(DescribeObservedQp(q), "lab:rxe0 QP 17 (pid 811 ibv_rc_pingpong)");
  q.pid = 0;
  q.comm = "ib_core";
  q.host.clear();
  EXPECT_EQ(DescribeObservedQp(q), "rxe0 QP 17 (kernel, ib_core)");
}

}  // namespace
}  // namespace qpconnect::test
