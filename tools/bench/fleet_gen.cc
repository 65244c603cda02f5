// SPDX-License-Identifier: MIT
// fleet_gen: a synthetic job's snapshots, as qp-inspect -o would write them on
// every host, with faults planted and their truth written down
// (tools/bench/fleet.sh, docs/inspect.md "Scale").
//
//   fleet_gen --hosts N --qps M --out DIR [--ranks P] [--seed S] [--no-dest]
//
// Writes DIR/node-0000.json ... (one snapshot per host, two samples 1.0 s
// apart) and DIR/truth.json. The job: N hosts, one device (mlx5_0 port 1)
// each, M RC QPs per host owned by P ranks (pids 1000 .. 1000+P-1, command
// "python" on every host). Every host creates its QPs in the same order, so
// QP numbers repeat on every host: QP k is 0x100 + k everywhere. QP k of
// host h is connected to QP k^1 of host h + o (k even) or h - o (k odd),
// o = 1 + (k/2 mod (N-1)): a mesh in which every (qpn, rqpn) pair occurs on
// every host. Each snapshot carries its host identity (GIDs fe80::h+1 and
// ::ffff:10.x.y.1, LID h+1) and, unless --no-dest, every QP's destination
// GID, as a driver's raw QP context would show it.
//
// Healthy pairs either move (both senders advance, receivers follow within a
// few PSNs) or are idle (all acknowledged). Planted (truth.json "faults"):
//   stopped   rank 4 on host 37: process state T, its receivers frozen, its
//             peers' sends outstanding, RNR counters rising;
//   killed    rank 2 on host 73: its QPs absent from both samples, its peers
//             retrying (sq_psn frozen, retry counters rising);
//   psn-skew  one pair whose receiver expects 999 PSNs ahead of its sender;
//   error     one QP in ERR, its peer's sends outstanding.
// (Host numbers are taken modulo N.)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "qpconnect/observe/snapshot.h"
#include "qpconnect/observe/snapshot_json.h"

namespace {

using qpconnect::Gid;
using qpconnect::KernelPortCounters;
using qpconnect::KernelQp;
using qpconnect::KernelSample;
using qpconnect::PortIdentity;
using qpconnect::Snapshot;

constexpr uint32_t kQpnBase = 0x100;
constexpr uint32_t kMask = 0xffffff;

struct Options {
  int hosts = 20;
  int qps = 50;
  int ranks = 8;
  uint64_t seed = 1;
  bool dest = true;
  std::string out;
};

std::string HostName(int h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "node-%04d", h);
  return buf;
}

Gid LinkLocal(int h) {
  Gid g{};
  g[0] = 0xfe;
  g[1] = 0x80;
  g[12] = static_cast<uint8_t>((h + 1) >> 24);
  g[13] = static_cast<uint8_t>((h + 1) >> 16);
  g[14] = static_cast<uint8_t>((h + 1) >> 8);
  g[15] = static_cast<uint8_t>(h + 1);
  return g;
}

Gid RoceV2(int h) {
  Gid g{};
  g[10] = g[11] = 0xff;
  g[12] = 10;
  g[13] = static_cast<uint8_t>(h >> 8);
  g[14] = static_cast<uint8_t>(h);
  g[15] = 1;
  return g;
}

// The fleet's wiring (the header's formula).
struct Wiring {
  int n = 0;
  int m = 0;
  int PeerHost(int h, int k) const {
    const int o = 1 + (k / 2) % (n - 1);
    return k % 2 == 0 ? (h + o) % n : ((h - o) % n + n) % n;
  }
  static int PeerQp(int k) { return k ^ 1; }
};

// One direction's PSNs (sender -> receiver) at the two samples.
struct Direction {
  uint32_t sq[2] = {0, 0};  // the sender's sq_psn
  uint32_t rq[2] = {0, 0};  // the receiver's rq_psn
};

enum class Fault { kNone, kStopped, kKilled, kSkewReceiver, kSkewSender, kError, kErrorPeer };

int Usage() {
  std::cerr << "usage: fleet_gen --hosts N --qps M --out DIR [--ranks P] [--seed S] [--no-dest]\n"
               "  M even, N >= 3; writes DIR/node-NNNN.json and DIR/truth.json\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--hosts") {
      o.hosts = std::atoi(value().c_str());
    } else if (a == "--qps") {
      o.qps = std::atoi(value().c_str());
    } else if (a == "--ranks") {
      o.ranks = std::atoi(value().c_str());
    } else if (a == "--seed") {
      o.seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--no-dest") {
      o.dest = false;
    } else if (a == "--out") {
      o.out = value();
    } else {
      return Usage();
    }
  }
  if (o.out.empty() || o.hosts < 3 || o.qps < 2 || o.qps % 2 != 0 || o.ranks < 1 ||
      o.hosts > 65000) {
    return Usage();
  }
  std::filesystem::create_directories(o.out);
  const Wiring w{o.hosts, o.qps};
  const int n = o.hosts;
  const int m = o.qps;
  const int stopped_host = 37 % n;
  const int stopped_rank = 4 % o.ranks;
  const int killed_host = 73 % n == stopped_host ? (stopped_host + 1) % n : 73 % n;
  const int killed_rank = 2 % o.ranks == stopped_rank ? (stopped_rank + 1) % o.ranks : 2 % o.ranks;

  // The fault of QP k on host h.
  std::vector<Fault> faults_of(static_cast<size_t>(n) * static_cast<size_t>(m), Fault::kNone);
  auto at = [&](int h, int k) -> Fault& {
    return faults_of[static_cast<size_t>(h) * static_cast<size_t>(m) + static_cast<size_t>(k)];
  };
  auto involved = [&](int h, int k) {
    return at(h, k) != Fault::kNone || at(w.PeerHost(h, k), Wiring::PeerQp(k)) != Fault::kNone;
  };
  for (int h = 0; h < n; ++h) {
    for (int k = 0; k < m; ++k) {
      if (h == stopped_host && k % o.ranks == stopped_rank) at(h, k) = Fault::kStopped;
      if (h == killed_host && k % o.ranks == killed_rank) at(h, k) = Fault::kKilled;
    }
  }
  // A pair whose hosts and QPs no other fault touches.
  auto free_pair = [&](int h0, int k0, int* h_out, int* k_out) {
    for (int d = 0; d < n * m; ++d) {
      const int h = (h0 + d / m) % n;
      const int k = (k0 + d) % m;
      const int ph = w.PeerHost(h, k);
      const int pk = Wiring::PeerQp(k);
      if (h == stopped_host || h == killed_host || ph == stopped_host || ph == killed_host)
        continue;
      if (involved(h, k) || involved(ph, pk)) continue;
      *h_out = h;
      *k_out = k;
      return;
    }
    std::cerr << "fleet_gen: no free pair for a fault\n";
    std::exit(1);
  };
  int skew_h = 0, skew_k = 0, err_h = 0, err_k = 0;
  free_pair(11 % n, 10 % m, &skew_h, &skew_k);
  at(skew_h, skew_k) = Fault::kSkewReceiver;
  at(w.PeerHost(skew_h, skew_k), Wiring::PeerQp(skew_k)) = Fault::kSkewSender;
  free_pair(90 % n, 20 % m, &err_h, &err_k);
  at(err_h, err_k) = Fault::kError;
  at(w.PeerHost(err_h, err_k), Wiring::PeerQp(err_k)) = Fault::kErrorPeer;

  // PSNs of direction (h, k) -> its peer: one random start each, deterministic.
  auto direction = [&](int h, int k) {
    std::mt19937_64 rng(o.seed * 1000003u + static_cast<uint64_t>(h) * 65537u +
                        static_cast<uint64_t>(k));
    Direction d;
    const uint32_t start = static_cast<uint32_t>(rng()) & kMask;
    const bool idle = rng() % 5 == 0;
    const uint32_t sent = idle ? 0 : 1 + static_cast<uint32_t>(rng() % 5000);
    const uint32_t lag0 = idle ? 0 : static_cast<uint32_t>(rng() % 32);
    // A healthy receiver accepts what arrives: over a second it moves too.
    const uint32_t lag1 = idle ? 0 : static_cast<uint32_t>(rng() % std::min<uint32_t>(32, sent));
    d.sq[0] = start;
    d.sq[1] = (start + sent) & kMask;
    d.rq[0] = (d.sq[0] - lag0) & kMask;
    d.rq[1] = (d.sq[1] - lag1) & kMask;
    const Fault sender = at(h, k);
    const Fault receiver = at(w.PeerHost(h, k), Wiring::PeerQp(k));
    const uint32_t stuck_lag = 5 + static_cast<uint32_t>(rng() % 40);
    if (receiver == Fault::kStopped || receiver == Fault::kError) {
      // The receiver takes nothing: the sender's packets stay outstanding.
      d.sq[1] = d.sq[0];
      d.rq[0] = d.rq[1] = (d.sq[0] - stuck_lag) & kMask;
    } else if (sender == Fault::kStopped || sender == Fault::kError) {
      d.sq[1] = d.sq[0];
      d.rq[0] = d.rq[1] = d.sq[0];  // it sends nothing: all acknowledged
    } else if (receiver == Fault::kKilled) {
      d.sq[1] = d.sq[0];  // retrying from the oldest unacknowledged PSN
    } else if (sender == Fault::kKilled) {
      d.sq[1] = d.sq[0];  // nothing arrives from a dead process
      d.rq[0] = d.rq[1] = d.sq[0];
    } else if (receiver == Fault::kSkewReceiver) {
      d.sq[1] = d.sq[0];
      d.rq[0] = d.rq[1] = (d.sq[0] + 999) & kMask;
    } else if (sender == Fault::kSkewReceiver || sender == Fault::kSkewSender ||
               receiver == Fault::kSkewSender) {
      d.sq[1] = d.sq[0];
      d.rq[0] = d.rq[1] = d.sq[0];
    }
    return d;
  };

  // Counters per host: rises planted with the faults.
  auto counters = [&](int h, int sample) {
    KernelPortCounters p;
    p.device = "mlx5_0";
    p.port = 1;
    uint64_t rnr_sent = 0, rnr_rcvd = 0, retry = 0, dup = 0;
    if (sample == 1) {
      for (int k = 0; k < m; ++k) {
        const Fault f = at(h, k);
        const Fault pf = at(w.PeerHost(h, k), Wiring::PeerQp(k));
        if (f == Fault::kStopped) rnr_sent += 3;
        if (pf == Fault::kStopped) rnr_rcvd += 3;
        if (pf == Fault::kKilled || pf == Fault::kError) retry += 1;
        if (f == Fault::kSkewReceiver) dup += 40;
      }
    }
    const uint64_t base = static_cast<uint64_t>(h) * 1000;
    p.counters = {{"sent_pkts", base + static_cast<uint64_t>(sample) * 100000},
                  {"rcvd_pkts", base + static_cast<uint64_t>(sample) * 100000},
                  {"duplicate_request", dup},
                  {"out_of_sequence", 0},
                  {"packet_seq_err", 0},
                  {"local_ack_timeout_err", retry},
                  {"rnr_nak_retry_err", rnr_rcvd},
                  {"out_of_buffer", rnr_sent}};
    return p;
  };

  for (int h = 0; h < n; ++h) {
    Snapshot s;
    s.host = HostName(h);
    s.taken_at = "2026-11-27T06:00:00Z";
    s.tool = "fleet_gen (qpconnect bench)";
    s.job = "fleet";
    PortIdentity id;
    id.device = "mlx5_0";
    id.port = 1;
    id.lid = static_cast<uint16_t>(h + 1);
    id.subnet_prefix = 0xfe80000000000000ull;
    id.gids = {LinkLocal(h), RoceV2(h)};
    s.identity = {id};
    for (int sample = 0; sample < 2; ++sample) {
      KernelSample ks;
      ks.at_seconds = sample;
      ks.qps.reserve(static_cast<size_t>(m));
      for (int k = 0; k < m; ++k) {
        const Fault f = at(h, k);
        if (f == Fault::kKilled) continue;
        const int ph = w.PeerHost(h, k);
        const int pk = Wiring::PeerQp(k);
        const Direction out = direction(h, k);
        const Direction in = direction(ph, pk);
        KernelQp q;
        q.device = "mlx5_0";
        q.port = 1;
        q.lqpn = kQpnBase + static_cast<uint32_t>(k);
        q.rqpn = kQpnBase + static_cast<uint32_t>(pk);
        q.sq_psn = out.sq[sample];
        q.rq_psn = in.rq[sample];
        q.type = "RC";
        q.state = f == Fault::kError ? "ERR" : "RTS";
        q.path_mig_state = "MIGRATED";
        q.pid = 1000 + k % o.ranks;
        q.comm = "python";
        q.process_state = f == Fault::kStopped ? "T" : "S";
        if (o.dest) q.dgid = RoceV2(ph);
        ks.qps.push_back(std::move(q));
      }
      ks.ports = {counters(h, sample)};
      s.samples.push_back(std::move(ks));
    }
    std::ofstream(o.out + "/" + HostName(h) + ".json") << qpconnect::SnapshotToText(s);
  }

  // The truth: every fault, its QPs (host, qpn), their peers and the rules
  // expected to name them.
  nlohmann::ordered_json faults = nlohmann::ordered_json::array();
  auto qp_json = [&](int h, int k) {
    return nlohmann::ordered_json{{"host", HostName(h)},
                                  {"qpn", kQpnBase + static_cast<uint32_t>(k)},
                                  {"pid", 1000 + k % o.ranks}};
  };
  auto add = [&](const char* kind, std::vector<std::pair<int, int>> qps,
                 std::vector<const char*> rules, std::string what) {
    nlohmann::ordered_json j{{"kind", kind}, {"what", what}, {"rules", rules}};
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    nlohmann::ordered_json peers = nlohmann::ordered_json::array();
    for (auto [h, k] : qps) {
      list.push_back(qp_json(h, k));
      peers.push_back(qp_json(w.PeerHost(h, k), Wiring::PeerQp(k)));
    }
    j["qps"] = std::move(list);
    j["peers"] = std::move(peers);
    faults.push_back(std::move(j));
  };
  std::vector<std::pair<int, int>> stopped, killed;
  for (int k = 0; k < m; ++k) {
    if (at(stopped_host, k) == Fault::kStopped) stopped.push_back({stopped_host, k});
    if (at(killed_host, k) == Fault::kKilled) killed.push_back({killed_host, k});
  }
  add("stopped", stopped, {"receiver-not-ready", "process-stopped"},
      "pid " + std::to_string(1000 + stopped_rank) + " on " + HostName(stopped_host) +
          " stopped (state T)");
  add("killed", killed, {"peer-qp-gone"},
      "pid " + std::to_string(1000 + killed_rank) + " on " + HostName(killed_host) +
          " killed: its QPs are gone");
  add("psn-skew", {{skew_h, skew_k}}, {"psn-receiver-ahead"},
      HostName(skew_h) + " QP " + std::to_string(kQpnBase + static_cast<uint32_t>(skew_k)) +
          " expects 999 PSNs ahead of its sender");
  add("error", {{err_h, err_k}}, {"qp-error-state"},
      HostName(err_h) + " QP " + std::to_string(kQpnBase + static_cast<uint32_t>(err_k)) +
          " in ERR");
  nlohmann::ordered_json truth{{"hosts", n},
                               {"qps_per_host", m},
                               {"ranks", o.ranks},
                               {"seed", o.seed},
                               {"dest", o.dest},
                               {"qpn_base", kQpnBase},
                               {"wiring",
                                "QP k of host h <-> QP k^1 of host h+o (k even) or h-o (k odd), "
                                "o = 1 + (k/2 mod (N-1))"},
                               {"faults", std::move(faults)}};
  std::ofstream(o.out + "/truth.json") << truth.dump(1) << "\n";
  std::cout << "fleet_gen: " << n << " hosts x " << m << " QPs ("
            << (static_cast<long>(n) * m - static_cast<long>(killed.size())) << " QPs in " << o.out
            << "), faults: stopped " << HostName(stopped_host) << " pid " << 1000 + stopped_rank
            << " (" << stopped.size() << " QPs), killed " << HostName(killed_host) << " pid "
            << 1000 + killed_rank << " (" << killed.size() << " QPs), psn-skew " << HostName(skew_h)
            << ", error " << HostName(err_h) << (o.dest ? "" : "; no destination addresses")
            << "\n";
  return 0;
}
