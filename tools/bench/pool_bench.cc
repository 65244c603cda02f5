// SPDX-License-Identifier: MIT
// Pooled reconnect against cold create-and-connect (issue 15, pool mode):
// two owning Connectors in one process, one per lab device, connect N RC QP
// pairs over a socketpair (no traffic), `rounds` times each way:
//   cold    Open() both (device, CQs, N QPs, INIT) + Connect() both, then
//           destroy everything;
//   pooled  Recycle() both (RTS -> RESET -> INIT, fresh PSNs) + Connect()
//           both, on the QPs of one Open().
// The two sides run in two threads, as two processes would. Prints the
// median per round of each and the ratio.
//
// Usage: pool_bench N ROUNDS   (in the lab: QPC_DEV0/1, QPC_GID0/1)
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "qpconnect/connector.h"
#include "qpconnect/oob/stdio.h"

namespace {

using Clock = std::chrono::steady_clock;
using qpconnect::Connector;

qpconnect::verbs::SessionOptions Side(const char* dev, const char* gid, uint32_t n) {
  qpconnect::verbs::SessionOptions o;
  o.device = dev;
  o.gid.index = static_cast<uint16_t>(std::atoi(gid));
  o.num_qps = n;
  o.rx_depth = 16;
  o.shared_buffers = true;  // as qp-connect
  return o;
}

bool ConnectPair(Connector& a, Connector& b) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return false;
  bool ok = false;
  {
    auto xa = qpconnect::oob::StdioExchanger::Create(fds[0], fds[0]);
    auto xb = qpconnect::oob::StdioExchanger::Create(fds[1], fds[1]);
    if (xa && xb) {
      qpconnect::ConnectorOptions o;
      o.timeout = std::chrono::seconds(120);
      auto fb = std::async(std::launch::async, [&] { return b.Connect(**xb, o); });
      auto ra = a.Connect(**xa, o);
      auto rb = fb.get();
      if (!ra) std::fprintf(stderr, "pool_bench: %s\n", ra.error().ToString().c_str());
      if (!rb) std::fprintf(stderr, "pool_bench: %s\n", rb.error().ToString().c_str());
      ok = ra && rb;
    }
  }
  close(fds[0]);
  close(fds[1]);
  return ok;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const char* d0 = std::getenv("QPC_DEV0");
  const char* d1 = std::getenv("QPC_DEV1");
  const char* g0 = std::getenv("QPC_GID0");
  const char* g1 = std::getenv("QPC_GID1");
  if (argc < 3 || !d0 || !d1 || !g0 || !g1) {
    std::fprintf(stderr, "usage (in the lab): pool_bench N ROUNDS\n");
    return 2;
  }
  const auto n = static_cast<uint32_t>(std::atoi(argv[1]));
  const int rounds = std::atoi(argv[2]);
  std::vector<double> cold;
  std::vector<double> pooled;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    auto fb = std::async(std::launch::async, [&] { return Connector::Open(Side(d1, g1, n)); });
    auto a = Connector::Open(Side(d0, g0, n));
    auto b = fb.get();
    if (!a || !b || !ConnectPair(**a, **b)) return 1;
    a->reset();
    b->reset();  // destroyed: part of the cold cost
    cold.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  auto a = Connector::Open(Side(d0, g0, n));
  auto b = Connector::Open(Side(d1, g1, n));
  if (!a || !b || !ConnectPair(**a, **b)) return 1;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    auto fb = std::async(std::launch::async, [&] { return (*b)->Recycle(); });
    auto ra = (*a)->Recycle();
    auto rb = fb.get();
    if (!ra || !rb || !ConnectPair(**a, **b)) return 1;
    pooled.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  const double c = Median(cold);
  const double p = Median(pooled);
  std::printf("pool n=%u rounds=%d cold_s=%.6f pooled_s=%.6f pooled_vs_cold=%.2fx\n", n, rounds, c,
              p, c / p);
  return 0;
}
