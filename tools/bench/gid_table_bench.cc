// SPDX-License-Identifier: MIT
// Benchmark: reading a port's whole GID table the way qp-info does (one
// ibv_query_gid_table() call, verbs::QueryGids) against the per-index
// ibv_query_gid_ex() loop over every entry that tools without the table call
// use. Run in the lab:
//   tools/lab/lab-run -- build/tools/bench/gid_table_bench [rounds]
// Prints the median wall time per full-table read for each method.
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/device_query.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double MedianUs(int rounds, F&& f) {
  std::vector<double> us;
  for (int i = 0; i < rounds; ++i) {
    auto s = Clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  auto names = qpconnect::verbs::ListDevices();
  if (!names || names->empty()) {
    std::fprintf(stderr, "gid_table_bench: no RDMA device (run it in the lab)\n");
    return 3;
  }
  for (const auto& name : *names) {
    auto ctx = qpconnect::verbs::OpenDevice(name);
    if (!ctx) return 6;
    ibv_port_attr pa{};
    if (ibv_query_port(ctx->get(), 1, &pa) != 0) return 6;
    auto len = static_cast<uint32_t>(pa.gid_tbl_len);
    size_t valid = 0;
    double table = MedianUs(rounds, [&] {
      auto g = qpconnect::verbs::QueryGids(**ctx, 1, len);
      valid = g ? g->size() : 0;
    });
    double per_index = MedianUs(rounds, [&] {
      for (uint32_t i = 0; i < len; ++i) {
        ibv_gid_entry e{};
        (void)ibv_query_gid_ex(ctx->get(), 1, i, &e, 0);
      }
    });
    std::printf(
        "%s port 1: %u entries (%zu valid): table call %.0f us, per-index loop %.0f us "
        "(%.1fx), median of %d\n",
        name.c_str(), len, valid, table, per_index, per_index / table, rounds);
  }
  return 0;
}
