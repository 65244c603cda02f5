// SPDX-License-Identifier: MIT
// Hand-made observations for the live judge: a healthy RC pair seen in two
// samples one second apart (rxe0 QP 17 <-> rxe1 QP 17 on one host, pids 100
// and 200), and one fixture per live rule that breaks exactly that rule.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "qpconnect/observe/live_judge.h"
#include "qpconnect/observe/observed.h"
#include "qpconnect/observe/pairing.h"

namespace qpconnect::test {

inline ObservedSample Sample(double at, const std::string& state, uint32_t sq, uint32_t rq,
                             const std::string& process_state = "S") {
  ObservedSample s;
  s.at_seconds = at;
  s.state = state;
  s.sq_psn = sq;
  s.rq_psn = rq;
  s.process_state = process_state;
  return s;
}

inline ObservedQp LiveQp(const std::string& device, uint32_t qpn, uint32_t dest, int pid,
                         const std::string& comm, Transport t = Transport::kRc) {
  ObservedQp q;
  q.source = ObservedSource::kSnapshot;
  q.origin = "snap.json";
  q.host = "lab";
  q.pid = pid;
  q.comm = comm;
  q.device = device;
  q.port = 1;
  q.qpn = qpn;
  q.transport = t;
  q.type_name = t == Transport::kUc ? "UC" : "RC";
  q.state = "RTS";
  q.dest_qpn = dest;
  return q;
}

inline ObservedPortCounters LivePort(const std::string& device, double interval = 1.0) {
  ObservedPortCounters p;
  p.host = "lab";
  p.device = device;
  p.port = 1;
  p.interval_seconds = interval;
  for (const char* name :
       {"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
        "send_rnr_err", "rcvd_seq_err", "completer_retry_err", "retry_exceeded_err", "send_err"}) {
    p.counters.push_back({name, {0, 0}});
  }
  return p;
}

// Adds `delta` to the second value of `name` on `device`'s port.
inline void Rise(Observation& o, const std::string& device, const std::string& name,
                 uint64_t delta) {
  for (ObservedPortCounters& p : o.ports) {
    if (p.device != device) continue;
    for (auto& [n, v] : p.counters) {
      if (n == name) v.second = v.first + delta;
    }
  }
}

// qps[0] = rxe0 QP 17 (pid 100 "server"), qps[1] = rxe1 QP 17 (pid 200
// "client"): each sends 100 PSNs in the second and receives the other's.
inline Observation HealthyPair(Transport t = Transport::kRc) {
  Observation o;
  ObservedQp a = LiveQp("rxe0", 17, 17, 100, "server", t);
  ObservedQp b = LiveQp("rxe1", 17, 17, 200, "client", t);
  a.samples = {Sample(0, "RTS", 1000, 5000), Sample(1, "RTS", 1100, 5100)};
  b.samples = {Sample(0, "RTS", 5000, 1000), Sample(1, "RTS", 5100, 1100)};
  o.qps = {a, b};
  o.ports = {LivePort("rxe0"), LivePort("rxe1")};
  return o;
}

// Both QPs frozen: a sends from `a_sq`, b expects `b_rq`; the other direction
// idle and in step.
inline Observation FrozenPair(uint32_t a_sq, uint32_t b_rq, Transport t = Transport::kRc) {
  Observation o = HealthyPair(t);
  o.qps[0].samples = {Sample(0, "RTS", a_sq, 5000), Sample(1, "RTS", a_sq, 5000)};
  o.qps[1].samples = {Sample(0, "RTS", 5000, b_rq), Sample(1, "RTS", 5000, b_rq)};
  return o;
}

// rxe1 QP 17's path to rxe0 QP 17 as qp-inspect reads it, its neighbour
// entry for 10.99.0.1 a wrong permanent MAC.
inline ObservedPath WrongNeighbourPath() {
  ObservedPath p;
  p.device = "rxe1";
  p.port = 1;
  p.lqpn = 17;
  p.pid = 200;
  p.source = "10.99.0.2";
  p.destination = "10.99.0.1";
  p.peer = "rxe0 QP 17";
  p.netdev = "veth1";
  p.facts =
      "veth1 (02:00:0a:63:00:02, untagged, MTU 1500) -> 10.99.0.1: route dev veth1 table "
      "101, on link; neighbour 10.99.0.1 02:00:00:00:00:99 PERMANENT";
  p.neighbour_address = "10.99.0.1";
  p.neighbour_state = "PERMANENT";
  p.neighbour_mac = "02:00:00:00:00:99";
  p.peer_netdev = "veth0";
  p.peer_mac = "02:00:0a:63:00:01";
  return p;
}

inline LiveReport JudgeAll(const Observation& o) { return JudgeLive(o, PairObservedQps(o)); }

// Ids of the error and warning findings.
inline std::set<std::string> LiveProblems(const LiveReport& r) {
  std::set<std::string> ids;
  for (const LiveFinding& f : r.findings) {
    if (f.finding.severity != Severity::kInfo) ids.insert(f.finding.id);
  }
  return ids;
}

inline std::string LiveDump(const LiveReport& r) {
  std::string out;
  for (const LiveFinding& f : r.findings) {
    out += FindingToString(f.finding) + "\n";
    for (const std::string& e : f.evidence) out += "    evidence: " + e + "\n";
  }
  for (const LivePairVerdict& v : r.pairs) {
    out += "pair " + std::to_string(v.pair.a) + "-" + std::to_string(v.pair.b) + " (" + v.pair.how +
           "): " + v.progress + "\n";
  }
  return out;
}

// One observation per live rule that raises exactly that rule.
inline const std::map<std::string, std::function<Observation()>>& LiveViolations() {
  static const auto* table = new std::map<std::string, std::function<Observation()>>{
      // The receiver was seen, then vanished (its process was killed).
      {"peer-qp-gone",
       [] {
         Observation o = HealthyPair();
         o.qps[1].samples.pop_back();
         o.qps[1].destroyed = true;
         return o;
       }},
      {"qp-error-state",
       [] {
         Observation o = HealthyPair();
         o.qps[0].state = "ERR";
         o.qps[0].samples.back().state = "ERR";
         return o;
       }},
      // The client never got past INIT: the server's rqpn names it.
      {"qp-not-connected",
       [] {
         Observation o = HealthyPair();
         o.qps[1].state = "INIT";
         o.qps[1].dest_qpn.reset();
         for (ObservedSample& s : o.qps[1].samples) s = Sample(s.at_seconds, "INIT", 0, 0);
         return o;
       }},
      // A third QP aims at the server, which is connected to the client.
      {"rqpn-dangling",
       [] {
         Observation o = HealthyPair();
         ObservedQp c = LiveQp("rxe1", 18, 17, 300, "intruder");
         c.samples = {Sample(0, "RTS", 7000, 7000), Sample(1, "RTS", 7000, 7000)};
         o.qps.push_back(c);
         return o;
       }},
      // The lab's measurement: the receiver expects 999 PSNs ahead.
      {"psn-receiver-ahead",
       [] {
         Observation o = FrozenPair(2680267, 2681266);
         Rise(o, "rxe1", "duplicate_request", 57);
         Rise(o, "rxe0", "completer_retry_err", 56);
         return o;
       }},
      {"psn-sender-ahead", [] { return FrozenPair(200000, 1000); }},
      {"psn-stalled",
       [] {
         Observation o = FrozenPair(1010, 1000);
         Rise(o, "rxe0", "completer_retry_err", 12);
         return o;
       }},
      // A stopped receiver: RNR NAKs rise on both ports.
      {"receiver-not-ready",
       [] {
         Observation o = FrozenPair(1128, 1000);
         o.qps[1].samples.back().process_state = "T";
         Rise(o, "rxe1", "send_rnr_err", 40);
         Rise(o, "rxe0", "rcvd_rnr_err", 40);
         return o;
       }},
      // An idle pair whose client is stopped.
      {"process-stopped",
       [] {
         Observation o = FrozenPair(1000, 1000);
         o.qps[1].samples.back().process_state = "T";
         return o;
       }},
      // An idle pair whose client's neighbour entry for the server holds
      // another MAC than the server's netdev (issue 31 item 5).
      {"roce-path-broken",
       [] {
         Observation o = FrozenPair(1000, 1000);
         o.qps[1].path = WrongNeighbourPath();
         return o;
       }},
  };
  return *table;
}

}  // namespace qpconnect::test
