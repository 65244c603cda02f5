// SPDX-License-Identifier: MIT
// Benchmark: SA PathRecord queries through one umad channel (qpconnect_sa),
// one destination after another, each timed. Run under umad2sim on an ibsim
// fabric (tools/bench/sa_paths.sh) or on a real IB port.
//   sa_path_bench [-d CA] [-i PORT] FIRST_LID LAST_LID
// Prints: queries, failures, total ms, per query p50/p99/max in us.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "qpconnect/sa/path_resolver.h"
#include "qpconnect/sa/umad_channel.h"

int main(int argc, char** argv) {
  using namespace qpconnect;
  std::string ca;
  int port_num = 0;
  std::vector<unsigned long> lids;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-d" && i + 1 < argc) {
      ca = argv[++i];
    } else if (a == "-i" && i + 1 < argc) {
      port_num = std::atoi(argv[++i]);
    } else {
      lids.push_back(std::strtoul(argv[i], nullptr, 0));
    }
  }
  if (lids.size() != 2 || lids[0] == 0 || lids[1] < lids[0] || lids[1] > 0xbfff) {
    std::fprintf(stderr, "usage: sa_path_bench [-d CA] [-i PORT] FIRST_LID LAST_LID\n");
    return 2;
  }
  auto port = sa::QueryUmadPort(ca, static_cast<uint8_t>(port_num));
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().ToString().c_str());
    return 3;
  }
  auto channel = sa::OpenUmadChannel(*port);
  if (!channel) {
    std::fprintf(stderr, "%s\n", channel.error().ToString().c_str());
    return 9;
  }
  std::vector<double> us;
  int failures = 0;
  sa::ResolveOptions options;
  const auto start = std::chrono::steady_clock::now();
  for (unsigned long lid = lids[0]; lid <= lids[1]; ++lid) {
    if (lid == port->lid) continue;
    sa::PathQuery q;
    q.dlid = static_cast<uint16_t>(lid);
    options.first_tid += 8;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = sa::ResolvePath(**channel, *port, q, options);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (!r) {
      if (++failures <= 3) std::fprintf(stderr, "%s\n", r.error().ToString().c_str());
    }
  }
  const double total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) {
    return us[static_cast<size_t>(p * static_cast<double>(us.size() - 1))];
  };
  std::printf(
      "queries %zu, failures %d, total %.1f ms, per query p50 %.0f us, p99 %.0f us, max %.0f us\n",
      us.size(), failures, total_ms, pct(0.5), pct(0.99), us.back());
  return failures == 0 ? 0 : 1;
}
