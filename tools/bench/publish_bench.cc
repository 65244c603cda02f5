// SPDX-License-Identifier: MIT
// publish_bench [DIR] [N]: what publishing connected peers for qp-inspect
// costs a process (qpconnect/peer_registry.h, issue 41): N QPs connected one
// at a time (one Publish each, as a libqpcm id's connect does), then all
// destroyed one at a time (one Withdraw each), into DIR (default: this
// user's PeersDir). Prints the per-event cost (mean, p50, p99, max) and the
// file's largest size. The recorded run: docs/bench/publish.txt.
#include <unistd.h>

#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "qpconnect/peer_registry.h"

using qpconnect::PeerRegistry;
using qpconnect::PublishedPeer;
using Clock = std::chrono::steady_clock;

namespace {

void Report(const char* what, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double u : us) sum += u;
  std::printf("%-9s %6zu events: mean %6.2f us  p50 %6.2f  p99 %6.2f  max %8.2f\n", what, us.size(),
              sum / static_cast<double>(us.size()), us[us.size() / 2], us[us.size() * 99 / 100],
              us.back());
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : qpconnect::PeersDir(getuid(), true);
  const size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10000;
  PeerRegistry::Options o;
  o.dir = dir;
  o.pid = static_cast<int>(getpid());
  o.start_time = qpconnect::ProcessStartTime(o.pid).value_or(0);
  o.host = "bench";
  PeerRegistry r(o);
  std::vector<double> up, down;
  up.reserve(n);
  down.reserve(n);
  PublishedPeer p;
  p.device = "rxe0";
  p.port = 1;
  p.peer_host = "node-b";
  p.peer_gid = qpconnect::GidFromString("::ffff:10.99.0.2");
  off_t largest = 0;
  struct stat st {};
  for (size_t i = 0; i < n; ++i) {
    p.qpn = static_cast<uint32_t>(17 + i);
    p.peer_qpn = static_cast<uint32_t>(100017 + i);
    const auto t = Clock::now();
    r.Publish({&p, 1});
    up.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  if (stat(r.path().c_str(), &st) == 0) largest = st.st_size;
  for (size_t i = 0; i < n; ++i) {
    const auto t = Clock::now();
    r.Withdraw("rxe0", static_cast<uint32_t>(17 + i));
    down.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  std::printf("publish_bench: %zu QPs into %s (failed: %s)\n", n, dir.c_str(),
              r.failed() ? "yes" : "no");
  Report("connect", up);
  Report("destroy", down);
  std::printf("file at %zu live QPs: %lld bytes; after the last destroy: %s\n", n,
              static_cast<long long>(largest),
              access(r.path().c_str(), F_OK) == 0 ? "still there" : "removed");
  return r.failed() ? 1 : 0;
}
