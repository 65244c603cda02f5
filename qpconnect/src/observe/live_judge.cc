// SPDX-License-Identifier: MIT
// The live judge (live_judge.h): the live rules, judged on kernel snapshots
// of running QPs:
//   peer-qp-gone, qp-error-state, qp-not-connected, rqpn-dangling,
//   psn-receiver-ahead, psn-sender-ahead, psn-stalled, receiver-not-ready,
//   process-stopped, roce-path-broken.
// Their metadata and sources are in live_catalogue.h.
//
// PSNs are 24-bit and wrap: "A is ahead of B by d" means (A - B) mod 2^24 = d
// with 0 < d < 2^23 (IBA ch. 9.7.2: half the PSN space is "ahead").
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "live_catalogue.h"
#include "qpconnect/observe/live_judge.h"

namespace qpconnect {
namespace {

using live_internal::LiveRule;

constexpr uint32_t kHalfPsnSpace = 1u << 23;

uint32_t PsnDistance(uint32_t to, uint32_t from) { return (to - from) & kPsnMask; }

// d when `a` is ahead of `b` by d (0 < d < 2^23), else 0.
uint32_t Ahead(uint32_t a, uint32_t b) {
  const uint32_t d = PsnDistance(a, b);
  return d < kHalfPsnSpace ? d : 0;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// Counter names by what they witness; drivers name them differently (rxe
// first, then mlx5). Values are per port.
const std::initializer_list<const char*> kDuplicateCounters = {"duplicate_request"};
// Out-of-sequence packets NAKed by a responder, and those NAKs received by a
// requester.
const std::initializer_list<const char*> kOutOfSequenceCounters = {"out_of_seq_request",
                                                                   "out_of_sequence"};
const std::initializer_list<const char*> kSequenceNakCounters = {"rcvd_seq_err", "packet_seq_err",
                                                                 "implied_nak_seq_err"};
const std::initializer_list<const char*> kRetryCounters = {
    "completer_retry_err", "retry_exceeded_err", "local_ack_timeout_err"};
const std::initializer_list<const char*> kRnrSentCounters = {"send_rnr_err", "out_of_buffer"};
const std::initializer_list<const char*> kRnrReceivedCounters = {
    "rcvd_rnr_err", "retry_rnr_exceeded_err", "rnr_nak_retry_err"};
// Packets a port failed to send (rxe: the netdev refused them): a receiver's
// ACKs among them.
const std::initializer_list<const char*> kSendErrorCounters = {"send_err"};

class Judge {
 public:
  Judge(const Observation& obs, const Pairing& pairing, const LiveJudgeOptions& options)
      : obs_(obs), pairing_(pairing), options_(options) {
    const size_t n = obs.qps.size();
    ambiguous_.assign(n, false);
    for (size_t i : pairing.ambiguous) ambiguous_[i] = true;
    flagged_.assign(n, false);
    paired_with_.assign(n, kNone);
    for (const ObservedPair& p : pairing.pairs) {
      paired_with_[p.a] = p.b;
      paired_with_[p.b] = p.a;
    }
    for (const ObservedPortCounters& p : obs.ports) {
      ports_.emplace(PortKey{p.host, p.device, p.port}, &p);
    }
    for (const ObservedQp& q : obs.qps) several_hosts_ |= q.host != obs.qps.front().host;
  }

  LiveReport Run() {
    report_.pairs.reserve(pairing_.pairs.size());
    for (const ObservedPair& p : pairing_.pairs) JudgePair(p);
    for (size_t i = 0; i < obs_.qps.size(); ++i) {
      if (paired_with_[i] == kNone) JudgeUnpaired(i);
    }
    SummarizeMissingPeers();
    for (LivePairVerdict& v : report_.pairs) {
      v.sound = !flagged_[v.pair.a] && !flagged_[v.pair.b];
    }
    std::stable_sort(report_.findings.begin(), report_.findings.end(),
                     [](const LiveFinding& x, const LiveFinding& y) {
                       return x.finding.severity > y.finding.severity;
                     });
    return std::move(report_);
  }

 private:
  const ObservedQp& Qp(size_t i) const { return obs_.qps[i]; }

  // Hosts are named only when the QPs come from more than one.
  std::string Describe(const ObservedQp& q) const { return DescribeObservedQp(q, several_hosts_); }

  static bool Judged(const ObservedQp& q) {
    return q.transport == Transport::kRc || q.transport == Transport::kUc;
  }

  // The port counters of `q`'s port, or nullptr.
  const ObservedPortCounters* PortOf(const ObservedQp& q) const {
    auto it = ports_.find(PortKey{q.host, q.device, q.port});
    return it == ports_.end() ? nullptr : it->second;
  }

  // Sum of the deltas of the named counters on `q`'s port (0 with one
  // sample), and one evidence line per counter that rose; with `totals`, also
  // one per counter that is not zero but did not rise (or with one sample).
  uint64_t CounterRise(const ObservedQp& q, std::initializer_list<const char*> names,
                       std::vector<std::string>* evidence, bool totals = false) const {
    const ObservedPortCounters* port = PortOf(q);
    if (port == nullptr) return 0;
    const bool two = port->interval_seconds > 0;
    const std::string where = " on " + q.device + " port " + std::to_string(q.port);
    uint64_t total = 0;
    for (const auto& [name, values] : port->counters) {
      if (std::find_if(names.begin(), names.end(),
                       [&name = name](const char* n) { return name == n; }) == names.end()) {
        continue;
      }
      if (two && values.second > values.first) {
        const uint64_t d = values.second - values.first;
        total += d;
        if (evidence != nullptr) {
          evidence->push_back(name + " +" + std::to_string(d) + where + " in " +
                              Seconds(port->interval_seconds) +
                              " (a port counter: any QP of the port may add to it)");
        }
      } else if (totals && evidence != nullptr && values.second != 0) {
        evidence->push_back(name + " " + std::to_string(values.second) + where +
                            (two ? ", unchanged in " + Seconds(port->interval_seconds)
                                 : " (one sample: the total since the port came up)"));
      }
    }
    return total;
  }

  void ProcessEvidence(const ObservedQp& q, std::vector<std::string>* evidence) const {
    if (q.samples.empty() || q.pid == 0) return;
    const std::string& s = q.samples.back().process_state;
    if (s.empty()) return;
    evidence->push_back("pid " + std::to_string(q.pid) + " (" + q.comm + ") is " +
                        ProcessStateWords(s));
  }

  LiveFinding& Add(const RuleInfo& meta, size_t qp, std::optional<size_t> peer,
                   std::string local_value, std::string remote_value, std::string message,
                   std::string fix) {
    LiveFinding f;
    f.finding.id = std::string(meta.id);
    f.finding.severity = meta.severity;
    f.finding.transports = meta.transports;
    f.finding.attribute = std::string(meta.attribute);
    f.finding.direction = Direction::kBoth;
    f.finding.local_value = std::move(local_value);
    f.finding.remote_value = std::move(remote_value);
    f.finding.message = std::move(message);
    f.finding.fix = std::move(fix);
    f.qp = qp;
    f.peer = peer;
    if (meta.severity != Severity::kInfo) {
      // A pair is unsound when a finding judges one of its QPs, or names both
      // (a QP aiming at a paired QP from outside does not taint that pair).
      flagged_[qp] = true;
      if (peer && paired_with_[qp] == *peer) flagged_[*peer] = true;
    }
    report_.findings.push_back(std::move(f));
    return report_.findings.back();
  }

  // ---- pairs -------------------------------------------------------------

  void JudgePair(const ObservedPair& p) {
    LivePairVerdict verdict;
    verdict.pair = p;
    const ObservedQp& a = Qp(p.a);
    const ObservedQp& b = Qp(p.b);
    const bool live =
        a.source == ObservedSource::kSnapshot || b.source == ObservedSource::kSnapshot;
    if (!live || !Judged(a) || !Judged(b)) {
      verdict.progress = live ? "not judged: not an RC/UC pair" : "not judged live: no snapshot";
      report_.pairs.push_back(std::move(verdict));
      return;
    }
    verdict.progress = Progress(a, b);
    report_.pairs.push_back(std::move(verdict));

    if (a.destroyed || b.destroyed) {
      if (a.destroyed && b.destroyed) return;  // both ended: nothing left to hang
      const size_t survivor = a.destroyed ? p.b : p.a;
      PeerGone(survivor, survivor == p.a ? p.b : p.a);
      return;
    }
    bool broken = false;
    for (auto [x, y] : {std::pair{p.a, p.b}, std::pair{p.b, p.a}}) {
      const std::string& state = Qp(x).state;
      if (state == "ERR" || state == "SQE") {
        ErrorState(x, y);
        broken = true;
      } else if (state == "RESET" || state == "INIT") {
        NotConnected(x, y);
        broken = true;
      }
    }
    if (broken) {
      JudgePaths(p);
      return;
    }
    bool receiver_named = false;
    if (a.transport == Transport::kRc && b.transport == Transport::kRc) {
      receiver_named |= JudgeDirection(p.a, p.b);
      receiver_named |= JudgeDirection(p.b, p.a);
    }
    if (!receiver_named) {
      for (auto [x, y] : {std::pair{p.a, p.b}, std::pair{p.b, p.a}}) {
        if (!Qp(x).samples.empty() && IsStoppedState(Qp(x).samples.back().process_state)) {
          ProcessStopped(x, y);
        }
      }
    }
    JudgePaths(p);
  }

  // roce-path-broken: each side's path facts (ObservedPath), read with the
  // last sample (issue 31 item 5).
  void JudgePaths(const ObservedPair& p) {
    for (auto [x, y] : {std::pair{p.a, p.b}, std::pair{p.b, p.a}}) {
      if (Qp(x).path) JudgePath(x, y, *Qp(x).path);
    }
  }

  void JudgePath(size_t x, size_t y, const ObservedPath& path) {
    const ObservedQp& q = Qp(x);
    const std::string port = q.device + " port " + std::to_string(q.port);
    std::string message, fix;
    if (path.source_gone) {
      message = port +
                " has no routable RoCE v2 address any more (only link-local GIDs, or "
                "none): the address " +
                Describe(q) + " connected from was removed";
      fix = "put the address back on its netdev (ip address add), or reconnect the job";
    } else if (path.destination_gone) {
      message = "the peer " + path.peer +
                "'s port has no routable RoCE v2 address any more: "
                "the address " +
                Describe(q) + " sends to was removed";
      fix = "put the address back on the peer's netdev (ip address add), or reconnect the job";
    } else if (!path.route_error.empty()) {
      message =
          "no route from " + path.netdev + " to " + path.destination + ": " + path.route_error;
      fix = "ip route add " + path.destination + " dev " + path.netdev +
            " (or the subnet's route via its gateway)";
    } else if (path.neighbour_state == "FAILED" || path.neighbour_state == "INCOMPLETE") {
      message = "the neighbour entry for " + path.neighbour_address + " on " + path.netdev +
                " is " + path.neighbour_state + ": nobody answers ARP for it, so nothing is sent";
      fix = "make " + path.neighbour_address +
            " answer ARP on that link (arp_ignore, a "
            "firewall, a VLAN), or set the entry: ip neigh replace " +
            path.neighbour_address + " lladdr MAC dev " + path.netdev;
    } else if (!path.neighbour_mac.empty() && !path.peer_mac.empty() &&
               path.neighbour_mac != path.peer_mac && path.neighbour_address == path.destination) {
      message = "the neighbour entry for " + path.neighbour_address + " on " + path.netdev +
                " is " + path.neighbour_mac + " " + path.neighbour_state + ", but the peer's " +
                path.peer_netdev + " is " + path.peer_mac +
                ": the packets go to another host and are dropped";
      fix = "ip neigh replace " + path.neighbour_address + " lladdr " + path.peer_mac + " dev " +
            path.netdev;
    } else {
      return;
    }
    LiveFinding& f =
        Add(LiveRule("roce-path-broken"), x, y, path.source,
            path.destination.empty() ? path.peer : path.destination,
            Describe(q) + " -> " + (path.peer.empty() ? "its peer" : path.peer) + ": " + message,
            std::move(fix));
    if (!path.facts.empty()) f.evidence.push_back("the kernel's path: " + path.facts);
    CounterRise(q, {"sent_pkts"}, &f.evidence);
    CounterRise(q, kRetryCounters, &f.evidence);
  }

  std::string Progress(const ObservedQp& a, const ObservedQp& b) const {
    if (a.destroyed || b.destroyed) {
      return a.destroyed && b.destroyed
                 ? "both gone by the last sample"
                 : Describe(a.destroyed ? a : b) + " gone by the last sample";
    }
    if (a.samples.size() < 2 || b.samples.size() < 2) return "one sample: progress unknown";
    // Signed movement from x to y: a requester's sq_psn goes back when it
    // retransmits (go-back-N after a NAK or a timeout).
    auto moved = [](const std::optional<uint32_t>& x, const std::optional<uint32_t>& y) {
      if (!x || !y) return int64_t{0};
      const uint32_t back = Ahead(*x, *y);
      return back != 0 ? -int64_t{back} : int64_t{PsnDistance(*y, *x)};
    };
    auto text = [](int64_t d) { return (d < 0 ? "" : "+") + std::to_string(d); };
    const int64_t a_sent = moved(a.samples.front().sq_psn, a.samples.back().sq_psn);
    const int64_t b_sent = moved(b.samples.front().sq_psn, b.samples.back().sq_psn);
    const int64_t a_got = moved(a.samples.front().rq_psn, a.samples.back().rq_psn);
    const int64_t b_got = moved(b.samples.front().rq_psn, b.samples.back().rq_psn);
    const double t = std::min(a.samples.back().at_seconds - a.samples.front().at_seconds,
                              b.samples.back().at_seconds - b.samples.front().at_seconds);
    const std::string counts =
        "in " + Seconds(t) + ": " + a.device + " QP " + std::to_string(a.qpn) + " sent " +
        text(a_sent) + " and received " + text(a_got) + " PSNs, " + b.device + " QP " +
        std::to_string(b.qpn) + " sent " + text(b_sent) + " and received " + text(b_got) +
        (a_sent < 0 || b_sent < 0 ? " (a sender went back to retransmit)" : "");
    if (a_got != 0 || b_got != 0) return "moving " + counts;
    // Nothing received: the gaps between each sender and its receiver, at the
    // first sample and at the last, say why.
    bool stuck = false;           // outstanding at both samples
    bool receiver_ahead = false;  // ahead at both samples
    for (const auto& [s, r] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
      if (s->state != "RTS" && s->state != "SQD") continue;  // not sending: sq_psn means nothing
      const ObservedSample& s1 = s->samples.front();
      const ObservedSample& s2 = s->samples.back();
      const ObservedSample& r1 = r->samples.front();
      const ObservedSample& r2 = r->samples.back();
      if (!s1.sq_psn || !s2.sq_psn || !r1.rq_psn || !r2.rq_psn) continue;
      stuck |= Ahead(*s1.sq_psn, *r1.rq_psn) != 0 && Ahead(*s2.sq_psn, *r2.rq_psn) != 0;
      receiver_ahead |= Ahead(*r1.rq_psn, *s1.sq_psn) != 0 && Ahead(*r2.rq_psn, *s2.sq_psn) != 0;
    }
    if (receiver_ahead) return "stuck: a receiver expects PSNs not yet sent; " + counts;
    if (stuck) return "stuck: packets outstanding, none accepted; " + counts;
    if (a_sent != 0 || b_sent != 0) return "sending, nothing accepted yet; " + counts;
    return "idle: PSNs unchanged, nothing outstanding";
  }

  void PeerGone(size_t survivor, size_t gone) {
    const ObservedQp& s = Qp(survivor);
    const ObservedQp& g = Qp(gone);
    std::vector<std::string> evidence;
    if (!g.samples.empty()) {
      evidence.push_back(Describe(g) + " was " + g.samples.back().state + " at " +
                         Seconds(g.samples.back().at_seconds) +
                         " and is gone from the last sample");
    } else if (g.destroyed) {
      evidence.push_back(Describe(g) + " was destroyed by its program (trace)");
    }
    CounterRise(s, kRetryCounters, &evidence, true);
    LiveFinding& f = Add(
        LiveRule("peer-qp-gone"), survivor, gone, s.state, "gone",
        "the peer QP no longer exists: its process exited or destroyed it; " + Describe(s) +
            " is still " + s.state + " with rqpn " + std::to_string(g.qpn) + " and waits for it",
        "Restart the peer and reconnect both QPs (exchange new QPNs and PSNs); make the "
        "survivor's program notice a dead peer (a completion error, a timeout or its "
        "out-of-band channel closing) instead of waiting");
    f.evidence = std::move(evidence);
  }

  void ErrorState(size_t x, size_t y) {
    const ObservedQp& q = Qp(x);
    std::vector<std::string> evidence;
    if (q.samples.size() >= 2 && q.samples.front().state != q.state) {
      evidence.push_back("was " + q.samples.front().state + " at " +
                         Seconds(q.samples.front().at_seconds) + ", " + q.state + " at " +
                         Seconds(q.samples.back().at_seconds));
    }
    CounterRise(q, kRetryCounters, &evidence);
    CounterRise(q, kRnrReceivedCounters, &evidence);
    ProcessEvidence(q, &evidence);
    LiveFinding& f =
        Add(LiveRule("qp-error-state"), x, y, q.state, Qp(y).state,
            Describe(q) + " is in " + q.state + " (its peer " + Describe(Qp(y)) + " is " +
                Qp(y).state + "): a completion error ended the connection; posted WRs are flushed",
            "Read the first failed completion's status in " + q.comm +
                " (retry exceeded, RNR retry exceeded, remote access, ...), fix its "
                "cause, then move both QPs to RESET and reconnect them");
    f.evidence = std::move(evidence);
  }

  void NotConnected(size_t x, size_t y) {
    const ObservedQp& q = Qp(x);
    const ObservedQp& peer = Qp(y);
    std::vector<std::string> evidence;
    if (peer.dest_qpn) {
      evidence.push_back(Describe(peer) + " has rqpn " + std::to_string(*peer.dest_qpn));
    }
    CounterRise(peer, kRetryCounters, &evidence);
    ProcessEvidence(q, &evidence);
    LiveFinding& f =
        Add(LiveRule("qp-not-connected"), x, y, q.state, peer.state,
            Describe(q) + " is still in " + q.state + " while " + Describe(peer) + " (" +
                peer.state + ") sends to it: it was never moved to RTR, so it drops what arrives",
            "Find why " + (q.comm.empty() ? std::string("its program") : q.comm) +
                " stopped before ibv_modify_qp to RTR (a failed exchange or modify); connect it "
                "with the peer's QPN and PSN, or restart both sides");
    f.evidence = std::move(evidence);
  }

  void ProcessStopped(size_t x, size_t y) {
    const ObservedQp& q = Qp(x);
    const std::string& s = q.samples.back().process_state;
    std::vector<std::string> evidence;
    ProcessEvidence(q, &evidence);
    LiveFinding& f =
        Add(LiveRule("process-stopped"), x, y, s,
            Qp(y).samples.empty() ? "" : Qp(y).samples.back().process_state,
            "pid " + std::to_string(q.pid) + " (" + q.comm + ") is " + ProcessStateWords(s) + ": " +
                Describe(q) + " neither posts nor polls while its peer " + Describe(Qp(y)) +
                " is connected to it",
            s == "Z" ? "Let its parent reap it, or restart the job; its QPs are gone "
                       "once it is reaped"
                     : "Resume it (kill -CONT " + std::to_string(q.pid) +
                           ", or fg in its shell) or detach the debugger");
    f.evidence = std::move(evidence);
  }

  // Judges the direction sender -> receiver of an RC pair by its PSNs.
  // Returns true when a finding names the receiver as not ready.
  bool JudgeDirection(size_t si, size_t ri) {
    const ObservedQp& s = Qp(si);
    const ObservedQp& r = Qp(ri);
    if (s.samples.empty() || r.samples.empty()) return false;
    if (s.state != "RTS" && s.state != "SQD") return false;  // not sending
    const ObservedSample& s1 = s.samples.front();
    const ObservedSample& s2 = s.samples.back();
    const ObservedSample& r1 = r.samples.front();
    const ObservedSample& r2 = r.samples.back();
    if (!s2.sq_psn || !r2.rq_psn) return false;
    const bool sampled_twice =
        s.samples.size() >= 2 && r.samples.size() >= 2 && s1.sq_psn && r1.rq_psn;
    const double t = sampled_twice ? r2.at_seconds - r1.at_seconds : 0;
    const bool receiver_frozen = sampled_twice && *r1.rq_psn == *r2.rq_psn;
    // Frozen for less than a retransmission takes proves nothing: judge such
    // samples as one.
    const bool two = sampled_twice && t >= options_.min_stuck_seconds;
    const bool stopped = IsStoppedState(r2.process_state);
    if (sampled_twice && !receiver_frozen && !stopped) return false;  // it accepts packets
    std::vector<std::string> rnr;
    const uint64_t rnr_rise =
        CounterRise(r, kRnrSentCounters, &rnr) + CounterRise(s, kRnrReceivedCounters, &rnr);

    if (sampled_twice && !receiver_frozen) {
      // The receiver accepts packets; only a stopped one drawing RNR NAKs is
      // judged: it is using up the receives it posted before it stopped.
      if (rnr_rise == 0) return false;
      rnr.insert(rnr.begin(), r.device + " QP " + std::to_string(r.qpn) + " rq_psn still moves (+" +
                                  std::to_string(PsnDistance(*r2.rq_psn, *r1.rq_psn)) + " in " +
                                  Seconds(t) +
                                  "): the receives posted before the process stopped run out");
      NotReady(si, ri, std::nullopt, std::move(rnr));
      return true;
    }

    std::vector<std::string> evidence;
    if (two) {
      evidence.push_back(r.device + " QP " + std::to_string(r.qpn) + " rq_psn frozen at " +
                         std::to_string(*r2.rq_psn) + " across " + Seconds(t) + "; " + s.device +
                         " QP " + std::to_string(s.qpn) + " sq_psn " +
                         (*s1.sq_psn == *s2.sq_psn
                              ? "frozen at " + std::to_string(*s2.sq_psn)
                              : std::to_string(*s1.sq_psn) + " -> " + std::to_string(*s2.sq_psn)));
    } else if (sampled_twice) {
      evidence.push_back("samples " + Seconds(t) + " apart: too close to call the PSNs stuck");
    } else {
      evidence.push_back("one sample: whether the PSNs move is unknown");
    }

    // The receiver expects PSNs the sender has not sent.
    const uint32_t ahead = Ahead(*r2.rq_psn, *s2.sq_psn);
    const bool ahead_before = two && Ahead(*r1.rq_psn, *s1.sq_psn) != 0;
    if (ahead != 0 && (two ? ahead_before : ahead > options_.single_sample_slack_psns)) {
      CounterRise(r, kDuplicateCounters, &evidence, true);
      CounterRise(s, kRetryCounters, &evidence);
      // A receiver ahead of a sender that retransmits is also what lost ACKs
      // look like: the receiver accepted the packets, its ACKs did not leave
      // its port, the sender went back to resend them (busy-pairs benchmark,
      // docs/benchmarks.md). Its port failing to send says which.
      const bool acks_lost = two && CounterRise(r, kSendErrorCounters, &evidence) != 0;
      const std::string gap = Describe(r) + " expects PSN " + std::to_string(*r2.rq_psn) +
                              " but its sender " + Describe(s) + " is at " +
                              std::to_string(*s2.sq_psn) + ": the receiver is " +
                              std::to_string(ahead) + " ahead";
      LiveFinding& f =
          Add(LiveRule("psn-receiver-ahead"), ri, si, "rq_psn " + std::to_string(*r2.rq_psn),
              "sq_psn " + std::to_string(*s2.sq_psn),
              acks_lost ? gap +
                              ", and its port fails to send: it accepted those packets, its "
                              "ACKs are lost, and the sender resends what was delivered, "
                              "discarded as duplicates"
                        : gap + ", so every packet is discarded as a duplicate",
              acks_lost ? "Find why " + r.device +
                              " cannot send (send_err): the netdev's transmit "
                              "queue and qdisc drops, the link, the host's load; if the pair "
                              "moved before, its PSNs were set right"
                        : "Set the receiver's rq_psn at RTR to the PSN the sender starts from (the "
                          "sq_psn it sets at RTS and publishes), then reconnect both QPs");
      f.evidence = std::move(evidence);
      return false;
    }

    // The sender has packets outstanding that the receiver does not accept.
    const uint32_t outstanding = Ahead(*s2.sq_psn, *r2.rq_psn);
    const bool outstanding_before = two && Ahead(*s1.sq_psn, *r1.rq_psn) != 0;
    if (outstanding == 0 || (two && !outstanding_before)) return false;
    if (stopped || rnr_rise != 0) {
      evidence.insert(evidence.end(), rnr.begin(), rnr.end());
      NotReady(si, ri, outstanding, std::move(evidence));
      return true;
    }
    // Sequence errors on both ends of the pair are the NAK loop of a PSN
    // mismatch; on one port alone they may come from any of its QPs.
    std::vector<std::string> oos;
    const bool oos_both = CounterRise(r, kOutOfSequenceCounters, &oos) != 0 &&
                          CounterRise(s, kSequenceNakCounters, &oos) != 0;
    if (outstanding > options_.max_in_flight_psns || (two && oos_both)) {
      evidence.insert(evidence.end(), oos.begin(), oos.end());
      CounterRise(s, kRetryCounters, &evidence);
      LiveFinding& f = Add(
          LiveRule("psn-sender-ahead"), si, ri, "sq_psn " + std::to_string(*s2.sq_psn),
          "rq_psn " + std::to_string(*r2.rq_psn),
          Describe(s) + " sends at PSN " + std::to_string(*s2.sq_psn) + " but " + Describe(r) +
              " expects " + std::to_string(*r2.rq_psn) + ": the sender is " +
              std::to_string(outstanding) + " ahead, so its packets are out of sequence and NAKed",
          "Set the receiver's rq_psn at RTR to the PSN the sender starts from (the sq_psn it "
          "sets at RTS and publishes), then reconnect both QPs");
      f.evidence = std::move(evidence);
      return false;
    }
    if (!two) return false;  // one sample: in flight or stuck cannot be told apart
    // Stuck means the sender retries: a slow one (a starved QP among
    // thousands, an emulated CPU) is not.
    std::vector<std::string> retries;
    if (CounterRise(s, kRetryCounters, &retries) == 0) return false;
    evidence.insert(evidence.end(), retries.begin(), retries.end());
    evidence.insert(evidence.end(), oos.begin(), oos.end());
    LiveFinding& f =
        Add(LiveRule("psn-stalled"), si, ri, "sq_psn " + std::to_string(*s2.sq_psn),
            "rq_psn " + std::to_string(*r2.rq_psn),
            Describe(s) + " has " + std::to_string(outstanding) + " PSNs outstanding that " +
                Describe(r) + " has not accepted in " + Seconds(t) + ": its packets do not arrive",
            "Check what the tracker cannot see with qp-trace or qp-validate on both sides' dumps "
            "(path MTU, GID and address vector), then the path: link state, MTU, routes, a "
            "firewall on UDP 4791");
    f.evidence = std::move(evidence);
    return false;
  }

  // receiver-not-ready about receiver `ri` of sender `si`.
  void NotReady(size_t si, size_t ri, std::optional<uint32_t> outstanding,
                std::vector<std::string> evidence) {
    const ObservedQp& s = Qp(si);
    const ObservedQp& r = Qp(ri);
    const std::string& state = r.samples.back().process_state;
    const bool stopped = IsStoppedState(state);
    ProcessEvidence(r, &evidence);
    const std::string who =
        r.pid != 0 ? "pid " + std::to_string(r.pid) + " (" + r.comm + ")" : Describe(r);
    LiveFinding& f =
        Add(LiveRule("receiver-not-ready"), ri, si, "process " + (state.empty() ? "?" : state),
            outstanding ? std::to_string(*outstanding) + " PSNs outstanding" : "sending",
            stopped ? "receiver not ready: " + who + " is " + ProcessStateWords(state) + "; " +
                          Describe(r) + " gets no new receives, so " + Describe(s) +
                          "'s sends are answered with RNR NAKs"
                    : "receiver not ready: " + Describe(r) + " has no receive posted, so " +
                          Describe(s) + "'s sends are answered with RNR NAKs",
            stopped ? "Resume " + who + " (kill -CONT " + std::to_string(r.pid) +
                          ") or restart it; a receiver must keep receives posted ahead of the "
                          "peer's sends"
                    : "Post receives before the peer sends and repost as they complete (more rx "
                      "depth, or an SRQ); pace the sender or use credits");
    f.evidence = std::move(evidence);
  }

  // ---- QPs in no pair ----------------------------------------------------

  void JudgeUnpaired(size_t xi) {
    const ObservedQp& x = Qp(xi);
    if (x.source != ObservedSource::kSnapshot || !Judged(x) || x.destroyed || !x.dest_qpn) return;
    if (x.state != "RTR" && x.state != "RTS" && x.state != "SQD") return;
    // The QP its rqpn (and destination) names, as pairing found it: an
    // ambiguous QP is never judged as if its peer were known.
    if (ambiguous_[xi]) return;
    const std::optional<size_t> named = pairing_.NamedBy(xi);
    if (!named) {
      MissingPeer(xi);
      return;
    }
    const size_t yi = *named;
    const ObservedQp& y = Qp(yi);
    if (y.destroyed) {
      PeerGone(xi, yi);
      return;
    }
    if (const size_t partner = paired_with_[yi]; partner != kNone) {
      Dangling(xi, yi, "it is connected to " + Describe(Qp(partner)));
      return;
    }
    if (y.state == "RESET" || y.state == "INIT") {
      NotConnected(yi, xi);
      return;
    }
    if (y.dest_qpn != x.qpn) {
      Dangling(xi, yi,
               y.dest_qpn
                   ? "its rqpn is " + std::to_string(*y.dest_qpn) + ", not " + std::to_string(x.qpn)
                   : "it names no peer");
    }
  }

  void Dangling(size_t xi, size_t yi, const std::string& why) {
    const ObservedQp& x = Qp(xi);
    const ObservedQp& y = Qp(yi);
    std::vector<std::string> evidence = {Describe(y) + " is " + y.state + ": " + why};
    CounterRise(x, kRetryCounters, &evidence);
    LiveFinding& f =
        Add(LiveRule("rqpn-dangling"), xi, yi, "rqpn " + std::to_string(*x.dest_qpn),
            y.dest_qpn ? "rqpn " + std::to_string(*y.dest_qpn) : "no rqpn",
            Describe(x) + " sends to QP " + std::to_string(*x.dest_qpn) + ", but " + Describe(y) +
                " does not point back (" + why + "): its packets reach a QP connected elsewhere",
            "Give each QP its own peer: exchange QPNs pairwise and set dest_qp_num to the peer "
            "that names this QP in turn; check the exchange maps QP i to the peer's QP i");
    f.evidence = std::move(evidence);
  }

  // True when q's port sent packets between the samples and received none
  // (rxe's sent_pkts and rcvd_pkts): no QP of the port hears from any peer.
  bool PortSilent(const ObservedQp& q, std::vector<std::string>* evidence) const {
    const ObservedPortCounters* port = PortOf(q);
    if (port == nullptr || port->interval_seconds <= 0) return false;
    auto find = [&](std::string_view name) {
      return std::find_if(port->counters.begin(), port->counters.end(),
                          [name](const auto& c) { return c.first == name; });
    };
    auto sent = find("sent_pkts");
    auto rcvd = find("rcvd_pkts");
    if (sent == port->counters.end() || rcvd == port->counters.end()) return false;
    if (sent->second.second <= sent->second.first || rcvd->second.second != rcvd->second.first) {
      return false;
    }
    evidence->push_back("sent_pkts +" + std::to_string(sent->second.second - sent->second.first) +
                        " and rcvd_pkts +0 on " + q.device + " port " + std::to_string(q.port) +
                        " in " + Seconds(port->interval_seconds) +
                        " (the port sends and hears nothing back: no ACK reaches it)");
    return true;
  }

  // Why x has no peer to judge it with: its rqpn names a QP in no input,
  // or every QP it could name is paired elsewhere (pairing.h, EliminatedQp).
  std::string NoPeer(size_t xi) const {
    const ObservedQp& x = Qp(xi);
    const std::string qpn = std::to_string(*x.dest_qpn);
    const EliminatedQp* e = pairing_.Eliminated(xi);
    if (e == nullptr) return "QP " + qpn + " is in none of the inputs";
    std::string why = "dangling by elimination: all " + std::to_string(e->back) + " QPs numbered " +
                      qpn + " that name it back are paired elsewhere";
    if (e->numbered > e->back) {
      why += " (and " + std::to_string(e->numbered - e->back) + " more numbered " + qpn +
             ", naming other QPs)";
    }
    if (!e->host.empty()) {
      why += "; by elimination too, its peer was on " + e->host +
             ", the only host given that holds no QP numbered " + qpn;
    }
    return why;
  }

  // x's rqpn names a QP in no input, or none free: gone if x shows it
  // unreachable.
  void MissingPeer(size_t xi) {
    const ObservedQp& x = Qp(xi);
    std::vector<std::string> evidence = {NoPeer(xi)};
    const bool two =
        x.samples.size() >= 2 &&
        x.samples.back().at_seconds - x.samples.front().at_seconds >= options_.min_stuck_seconds;
    const ObservedSample& first = x.samples.front();
    const ObservedSample& last = x.samples.back();
    // No forward progress: sq_psn frozen, or gone back (go-back-N: a sender
    // that gets no ACK retransmits from the oldest unacknowledged PSN, so two
    // samples of it move back as often as forward), and nothing received.
    const bool rq_frozen = first.rq_psn == last.rq_psn;
    const bool sq_frozen = first.sq_psn == last.sq_psn;
    const bool sq_back = first.sq_psn && last.sq_psn && Ahead(*first.sq_psn, *last.sq_psn) != 0;
    // A stopped process posts nothing: its frozen sq_psn says nothing of the
    // peer (retransmission, sq_psn going back, still does).
    const bool stopped = last.process_state == "T" || last.process_state == "t";
    std::vector<std::string> silent;
    const bool stalled =
        two && rq_frozen && ((sq_frozen && !stopped) || sq_back || PortSilent(x, &silent));
    if (x.transport == Transport::kRc && x.state == "RTS" && stalled &&
        CounterRise(x, kRetryCounters, &evidence) != 0) {
      const std::string across = " across " + Seconds(last.at_seconds - first.at_seconds);
      if (sq_frozen) {
        evidence.push_back("sq_psn frozen at " + std::to_string(last.sq_psn.value_or(0)) + across);
      } else if (sq_back) {
        evidence.push_back("sq_psn went back from " + std::to_string(*first.sq_psn) + " to " +
                           std::to_string(*last.sq_psn) + across +
                           " (retransmitting: nothing it sends is acknowledged)");
      } else {
        evidence.insert(evidence.end(), silent.begin(), silent.end());
      }
      LiveFinding& f = Add(
          LiveRule("peer-qp-gone"), xi, std::nullopt, x.state, "absent",
          "the peer QP no longer exists: its process exited or destroyed it; " + Describe(x) +
              " is still " + x.state + " with rqpn " + std::to_string(*x.dest_qpn) + " and retries",
          "Restart the peer and reconnect both QPs (exchange new QPNs and PSNs); make the "
          "survivor's program notice a dead peer (a completion error, a timeout or its "
          "out-of-band channel closing) instead of waiting");
      f.evidence = std::move(evidence);
      return;
    }
    missing_.push_back(xi);
  }

  // Unchecked notes for peers in no input, listed up to a cap, then summed up.
  void SummarizeMissingPeers() {
    constexpr size_t kListed = 16;
    const RuleInfo& meta = LiveRule("peer-qp-gone");
    for (size_t n = 0; n < missing_.size() && n <= kListed; ++n) {
      LiveFinding f;
      f.finding.id = std::string(meta.id);
      f.finding.severity = Severity::kInfo;
      f.finding.unchecked = true;
      f.finding.transports = meta.transports;
      f.finding.attribute = std::string(meta.attribute);
      f.qp = missing_[n];
      const ObservedQp& x = Qp(missing_[n]);
      if (n == kListed) {
        f.finding.more_qps = static_cast<uint32_t>(missing_.size() - kListed);
        f.finding.message = std::to_string(missing_.size() - kListed) +
                            " more QPs name peers in none of the inputs";
      } else {
        f.finding.local_value = "rqpn " + std::to_string(*x.dest_qpn);
        f.finding.message =
            pairing_.Eliminated(missing_[n]) != nullptr
                ? Describe(x) + " names QP " + std::to_string(*x.dest_qpn) + ": " +
                      NoPeer(missing_[n]) +
                      "; it is not seen stuck (retrying without progress), so not judged"
                : Describe(x) + " names QP " + std::to_string(*x.dest_qpn) +
                      ", which is in none of the inputs: its peer was not observed";
      }
      f.finding.fix = "Give the peer host's snapshot (qp-inspect -o) too";
      report_.findings.push_back(std::move(f));
    }
  }

  const Observation& obs_;
  const Pairing& pairing_;
  const LiveJudgeOptions& options_;
  bool several_hosts_ = false;
  // Per QP, indexed by its place in the observation.
  static constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<bool> ambiguous_;      // pairing could not tell its peer
  std::vector<size_t> paired_with_;  // its partner, kNone when in no pair
  // A port by (host, device, port), the views into the observation's strings:
  // looked up per QP without building a string.
  struct PortKey {
    std::string_view host;
    std::string_view device;
    uint8_t port = 0;
    bool operator==(const PortKey&) const = default;
  };
  struct PortKeyHash {
    size_t operator()(const PortKey& k) const {
      return std::hash<std::string_view>()(k.host) * 31 + std::hash<std::string_view>()(k.device) +
             k.port;
    }
  };
  std::unordered_map<PortKey, const ObservedPortCounters*, PortKeyHash> ports_;
  std::vector<bool> flagged_;    // named by an error or warning
  std::vector<size_t> missing_;  // QPs whose peer is in no input
  LiveReport report_;
};

}  // namespace

bool IsStoppedState(const std::string& process_state) {
  return process_state == "T" || process_state == "t" || process_state == "Z";
}

std::string ProcessStateWords(const std::string& s) {
  if (s == "T") return "stopped";
  if (s == "t") return "stopped by a tracer";
  if (s == "Z") return "a zombie (exited, not reaped)";
  if (s == "D") return "in uninterruptible sleep";
  if (s == "R") return "running";
  if (s == "S") return "sleeping";
  return "in state " + s;
}

std::string DescribeObservedQp(const ObservedQp& qp, bool with_host) {
  std::string out = with_host && !qp.host.empty() ? qp.host + ":" : "";
  out += (qp.device.empty() ? std::string("?") : qp.device) + " QP " + std::to_string(qp.qpn);
  if (qp.pid != 0) {
    out += " (pid " + std::to_string(qp.pid) + (qp.comm.empty() ? "" : " " + qp.comm) + ")";
  } else if (!qp.comm.empty()) {
    out += " (kernel, " + qp.comm + ")";
  }
  return out;
}

std::span<const RuleInfo> LiveRuleCatalogue() { return live_internal::kLiveRules; }

const RuleInfo* FindLiveRule(std::string_view id) {
  for (const RuleInfo& r : live_internal::kLiveRules) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

LiveReport JudgeLive(const Observation& observation, const Pairing& pairing,
                     const LiveJudgeOptions& options) {
  return Judge(observation, pairing, options).Run();
}

}  // namespace qpconnect
