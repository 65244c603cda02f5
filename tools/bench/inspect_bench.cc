// SPDX-License-Identifier: MIT
// Benchmark: qp-inspect and qp-validate's snapshot mode at scale, without a
// kernel. N QPs (N/2 RC pairs on two devices, QPNs scattered) are built as the
// kernel's RDMA_NLDEV_CMD_RES_QP_GET replies (32 KiB messages, as the kernel
// fills them), two samples one second apart, then each step is timed as the
// tools run it:
//   parse     the netlink replies into rows (qp-inspect's ParseQpMessage)
//   table     the text listing (FormatSnapshotText)
//   write     the snapshot file (SnapshotToText)
//   read      the snapshot file back (SnapshotFromJson)
//   observe   the samples merged into the Observation model (AddSnapshot)
//   pair      PairObservedQps
//   judge     JudgeLive
// Usage: inspect_bench [QPS [RUNS [FILE]]]   (default 10000 QPs, median of 5
// runs); FILE receives the snapshot, for timing `qp-validate FILE` itself.
// Recorded in docs/benchmarks.md; tools/bench/inspect.sh runs it.
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "qpconnect/observe/live_judge.h"
#include "qpconnect/observe/netlink.h"
#include "qpconnect/observe/pairing.h"
#include "qpconnect/observe/snapshot.h"
#include "qpconnect/observe/snapshot_json.h"
#include "qpconnect/observe/snapshot_text.h"

namespace {

using qpconnect::KernelQp;
using qpconnect::KernelSample;
using qpconnect::Snapshot;

constexpr size_t kMessageBytes = 32 * 1024;

// The replies for `qps` QPs of one device, as the kernel would send them.
// QP i of rxe0 (QPN 17 + 7i) is connected to QP i of rxe1 (QPN 100017 + 7i);
// each one's sq_psn is the other's rq_psn.
std::vector<std::vector<char>> BuildReplies(const char* device, uint32_t first_qpn, size_t qps,
                                            uint32_t step) {
  const bool first = first_qpn == 17;
  std::vector<std::vector<char>> out;
  size_t i = 0;
  while (i < qps) {
    std::vector<char> buf(kMessageBytes + 4096);
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
    mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
    mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, device);
    nlattr* table = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP);
    for (; i < qps && nlh->nlmsg_len < kMessageBytes; ++i) {
      const uint32_t qpn = first_qpn + static_cast<uint32_t>(i) * 7;
      const uint32_t peer = (first ? 100017u : 17u) + static_cast<uint32_t>(i) * 7;
      const uint32_t x = static_cast<uint32_t>(i * 104729 + step) & 0xffffff;
      const uint32_t y = static_cast<uint32_t>(i * 7919 + step) & 0xffffff;
      nlattr* e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PDN, 1);
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PID, 1000 + static_cast<uint32_t>(i % 64));
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQPN, peer);
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQ_PSN, first ? y : x);
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_SQ_PSN, first ? x : y);
      mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 0);
      mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE, 2);
      mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, 3);
      mnl_attr_nest_end(nlh, e);
    }
    mnl_attr_nest_end(nlh, table);
    buf.resize(nlh->nlmsg_len);
    out.push_back(std::move(buf));
  }
  return out;
}

double Ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Times {
  double parse = 0, table = 0, write = 0, read = 0, observe = 0, pair = 0, judge = 0;
  double Total() const { return parse + table + write + read + observe + pair + judge; }
};

}  // namespace

int main(int argc, char** argv) {
  const size_t qps = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 10000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const size_t half = qps / 2;
  // Sample 2: every PSN moved by 100 (traffic flows).
  std::vector<std::vector<char>> replies[2];
  for (uint32_t s = 0; s < 2; ++s) {
    for (auto& r : BuildReplies("rxe0", 17, half, s * 100)) replies[s].push_back(std::move(r));
    for (auto& r : BuildReplies("rxe1", 100017, qps - half, s * 100)) {
      replies[s].push_back(std::move(r));
    }
  }
  size_t bytes = 0;
  for (const auto& r : replies[0]) bytes += r.size();

  std::vector<Times> all;
  size_t pairs = 0, findings = 0, json_bytes = 0, table_bytes = 0;
  for (int run = 0; run < runs; ++run) {
    Times t;
    Snapshot snap;
    snap.host = "bench";
    t.parse = Ms([&] {
      for (int s = 0; s < 2; ++s) {
        KernelSample sample;
        sample.at_seconds = s;
        sample.qps.reserve(qps);
        for (const auto& r : replies[s]) {
          qpconnect::kernel::ParseQpMessage(reinterpret_cast<const nlmsghdr*>(r.data()),
                                            &sample.qps);
        }
        for (KernelQp& q : sample.qps) {
          q.comm = "bench";
          q.process_state = "S";
        }
        sample.ports = {{"rxe0", 1, {{"duplicate_request", 0}}},
                        {"rxe1", 1, {{"send_rnr_err", 0}}}};
        snap.samples.push_back(std::move(sample));
      }
    });
    std::string table;
    t.table = Ms([&] { table = qpconnect::FormatSnapshotText(snap); });
    std::string text;
    t.write = Ms([&] { text = qpconnect::SnapshotToText(snap); });
    qpconnect::Result<Snapshot> back = qpconnect::Error{};
    t.read = Ms([&] { back = qpconnect::SnapshotFromJson(text); });
    if (!back) {
      std::fprintf(stderr, "read failed: %s\n", back.error().ToString().c_str());
      return 1;
    }
    qpconnect::Observation obs;
    t.observe = Ms([&] { qpconnect::AddSnapshot(*back, "bench.json", &obs); });
    qpconnect::Pairing pairing;
    t.pair = Ms([&] { pairing = qpconnect::PairObservedQps(obs); });
    qpconnect::LiveReport report;
    t.judge = Ms([&] { report = qpconnect::JudgeLive(obs, pairing); });
    pairs = pairing.pairs.size();
    findings = report.findings.size();
    json_bytes = text.size();
    if (argc > 3 && run == 0) std::ofstream(argv[3]) << text << "\n";
    table_bytes = table.size();
    all.push_back(t);
  }
  auto median = [&](double Times::*field) {
    std::vector<double> v;
    for (const Times& t : all) v.push_back(t.*field);
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> totals;
  for (const Times& t : all) totals.push_back(t.Total());
  std::sort(totals.begin(), totals.end());
  std::printf(
      "%zu QPs (%zu pairs found, %zu findings), 2 samples; netlink replies %zu bytes "
      "in %zu messages per sample; snapshot file %zu bytes; table %zu bytes\n",
      qps, pairs, findings, bytes, replies[0].size(), json_bytes, table_bytes);
  std::printf(
      "median of %d runs, ms: parse %.1f, table %.1f, write %.1f, read %.1f, observe %.1f, "
      "pair %.1f, judge %.1f; total %.1f\n",
      runs, median(&Times::parse), median(&Times::table), median(&Times::write),
      median(&Times::read), median(&Times::observe), median(&Times::pair), median(&Times::judge),
      totals[totals.size() / 2]);
  return 0;
}
