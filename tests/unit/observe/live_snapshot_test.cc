// SPDX-License-Identifier: MIT
// AddSnapshot(): the raw samples of a kernel snapshot merged into the
// Observation model that pairing and the live judge read.
#include <gtest/gtest.h>

#include "qpconnect/observe/snapshot.h"

namespace qpconnect {
namespace {

KernelQp Row(const std::string& device, uint32_t lqpn, const std::string& type,
             const std::string& state, uint32_t rqpn, uint32_t sq, uint32_t rq, int pid) {
  KernelQp q;
  q.device = device;
  q.port = 1;
  q.lqpn = lqpn;
  q.type = type;
  q.state = state;
  if (type == "RC" || type == "UC") {
    q.rqpn = rqpn;
    q.rq_psn = rq;
  }
  q.sq_psn = sq;
  q.pid = pid;
  q.comm = pid == 0 ? "ib_core" : "prog";
  q.process_state = pid == 0 ? "" : "S";
  return q;
}

Snapshot TwoSamples() {
  Snapshot s;
  s.host = "lab";
  KernelSample a;
  a.at_seconds = 0;
  a.qps = {Row("rxe0", 1, "GSI", "RTS", 0, 0, 0, 0), Row("rxe0", 17, "RC", "RTS", 17, 10, 20, 7),
           Row("rxe1", 17, "RC", "RTS", 17, 20, 10, 8), Row("rxe1", 18, "RC", "INIT", 0, 0, 0, 8)};
  a.ports = {{"rxe0", 1, {{"duplicate_request", 5}, {"send_rnr_err", 0}}}};
  KernelSample b = a;
  b.at_seconds = 1.25;
  b.qps.erase(b.qps.begin() + 2);  // rxe1 QP 17 gone
  b.qps.push_back(Row("rxe1", 19, "UD", "RTS", 0, 3, 0, 8));
  b.ports = {{"rxe0", 1, {{"duplicate_request", 62}, {"send_rnr_err", 0}, {"new_one", 4}}}};
  s.samples = {a, b};
  return s;
}

TEST(AddSnapshot, MergesSamplesPerQpAndMarksTheVanished) {
  Observation o;
  AddSnapshot(TwoSamples(), "snap.json", &o);
  ASSERT_EQ(o.qps.size(), 5u);
  const ObservedQp& gsi = o.qps[0];
  EXPECT_EQ(gsi.type_name, "GSI");
  EXPECT_FALSE(gsi.transport);
  EXPECT_FALSE(gsi.dest_qpn);
  EXPECT_EQ(gsi.samples.size(), 2u);

  const ObservedQp& a = o.qps[1];
  EXPECT_EQ(a.source, ObservedSource::kSnapshot);
  EXPECT_EQ(a.origin, "snap.json");
  EXPECT_EQ(a.host, "lab");
  EXPECT_EQ(a.device, "rxe0");
  EXPECT_EQ(a.qpn, 17u);
  EXPECT_EQ(a.transport, Transport::kRc);
  EXPECT_EQ(a.dest_qpn, 17u);
  EXPECT_EQ(a.pid, 7);
  EXPECT_FALSE(a.destroyed);
  ASSERT_EQ(a.samples.size(), 2u);
  EXPECT_EQ(a.samples[1].at_seconds, 1.25);
  EXPECT_EQ(a.samples[1].sq_psn, 10u);
  EXPECT_EQ(a.samples[1].rq_psn, 20u);
  EXPECT_EQ(a.samples[1].process_state, "S");

  const ObservedQp& gone = o.qps[2];
  EXPECT_EQ(gone.device, "rxe1");
  EXPECT_TRUE(gone.destroyed);
  EXPECT_EQ(gone.samples.size(), 1u);

  const ObservedQp& init = o.qps[3];
  EXPECT_EQ(init.state, "INIT");
  EXPECT_FALSE(init.dest_qpn) << "an rqpn before RTR means nothing";

  const ObservedQp& fresh = o.qps[4];
  EXPECT_EQ(fresh.transport, Transport::kUd);
  ASSERT_EQ(fresh.samples.size(), 1u);
  EXPECT_EQ(fresh.samples[0].at_seconds, 1.25);
  EXPECT_FALSE(fresh.destroyed);
}

TEST(AddSnapshot, PortCountersKeepFirstAndLastWithTheInterval) {
  Observation o;
  AddSnapshot(TwoSamples(), "snap.json", &o);
  ASSERT_EQ(o.ports.size(), 1u);
  const ObservedPortCounters& p = o.ports[0];
  EXPECT_EQ(p.host, "lab");
  EXPECT_EQ(p.interval_seconds, 1.25);
  ASSERT_EQ(p.counters.size(), 3u);
  EXPECT_EQ(p.counters[0].first, "duplicate_request");
  EXPECT_EQ(p.counters[0].second.first, 5u);
  EXPECT_EQ(p.counters[0].second.second, 62u);
  EXPECT_EQ(p.counters[2].first, "new_one");
  EXPECT_EQ(p.counters[2].second.first, 4u);
}

TEST(AddSnapshot, SameQpnUnderAnotherPidIsAnotherQp) {
  Snapshot s = TwoSamples();
  s.samples[1].qps[1].pid = 99;  // rxe0 QP 17 destroyed and its number reused
  Observation o;
  AddSnapshot(s, "snap.json", &o);
  ASSERT_EQ(o.qps.size(), 6u);
  EXPECT_TRUE(o.qps[1].destroyed);
  EXPECT_EQ(o.qps[4].pid, 99);
}

TEST(AddSnapshot, OneSampleHasNoInterval) {
  Snapshot s = TwoSamples();
  s.samples.pop_back();
  Observation o;
  AddSnapshot(s, "x", &o);
  EXPECT_EQ(SnapshotInterval(s), 0);
  ASSERT_EQ(o.ports.size(), 1u);
  EXPECT_EQ(o.ports[0].interval_seconds, 0);
  for (const ObservedQp& q : o.qps) EXPECT_FALSE(q.destroyed);
}

}  // namespace
}  // namespace qpconnect
