// SPDX-License-Identifier: MIT
// The mesh's logic without MPI or a device (issue 13): device choice by
// local rank, qp-mesh's options, and the collective verdict: ranks that run
// ConnectMesh over an in-process MeshComm (one thread per rank) all return
// the same error naming every failed pair when no rank can open its QPs
// (this machine has no RDMA device), and nobody waits forever.
#include <gtest/gtest.h>

#include <barrier>
#include <cstdlib>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "options.h"
#include "qpconnect/mesh.h"

namespace qpconnect {
namespace {

// All ranks of one job in one process: each collective is two barrier
// phases around a shared table.
class Job {
 public:
  explicit Job(int size)
      : size_(size),
        sync_(size),
        table_(static_cast<size_t>(size)),
        gathered_(static_cast<size_t>(size)) {}
  int size() const { return size_; }
  std::barrier<>& sync() { return sync_; }
  std::vector<std::vector<std::string>>& table() { return table_; }
  std::vector<std::string>& gathered() { return gathered_; }

 private:
  int size_;
  std::barrier<> sync_;
  std::vector<std::vector<std::string>> table_;  // [from][to]
  std::vector<std::string> gathered_;
};

class ThreadComm final : public MeshComm {
 public:
  ThreadComm(Job& job, int rank) : job_(job), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return job_.size(); }
  int local_rank() const override { return rank_; }
  Result<std::vector<std::string>> AllToAll(const std::vector<std::string>& to_each) override {
    job_.table()[static_cast<size_t>(rank_)] = to_each;
    job_.sync().arrive_and_wait();
    std::vector<std::string> out;
    for (int p = 0; p < job_.size(); ++p) {
      out.push_back(job_.table()[static_cast<size_t>(p)][static_cast<size_t>(rank_)]);
    }
    ++collectives;
    job_.sync().arrive_and_wait();
    return out;
  }
  Result<std::vector<std::string>> AllGather(const std::string& mine) override {
    job_.gathered()[static_cast<size_t>(rank_)] = mine;
    job_.sync().arrive_and_wait();
    std::vector<std::string> out = job_.gathered();
    ++collectives;
    job_.sync().arrive_and_wait();
    return out;
  }
  int collectives = 0;

 private:
  Job& job_;
  int rank_;
};

TEST(MeshDevice, RoundRobinByLocalRank) {
  const std::vector<std::string> devs = {"mlx5_0", "mlx5_1"};
  EXPECT_EQ(ChooseMeshDevice(devs, 0, "x"), "mlx5_0");
  EXPECT_EQ(ChooseMeshDevice(devs, 1, "x"), "mlx5_1");
  EXPECT_EQ(ChooseMeshDevice(devs, 2, "x"), "mlx5_0");
  EXPECT_EQ(ChooseMeshDevice(devs, 7, "x"), "mlx5_1");
  EXPECT_EQ(ChooseMeshDevice({}, 3, "rxe0"), "rxe0");
  EXPECT_EQ(ChooseMeshDevice(devs, -1, "x"), "mlx5_0");
}

TEST(MeshRun, OneRankIsRefused) {
  Job job(1);
  ThreadComm comm(job, 0);
  MeshReport report;
  auto r = ConnectMesh(comm, MeshOptions{}, &report);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().detail.find("at least 2 ranks"), std::string::npos);
  EXPECT_EQ(comm.collectives, 0);  // refused before any collective: nobody waits for it
}

TEST(MeshRun, EveryRankGetsTheSameVerdictWhenNoRankCanOpen) {
  constexpr int kRanks = 3;
  Job job(kRanks);
  std::vector<std::future<std::pair<Result<void>, MeshReport>>> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.push_back(std::async(std::launch::async, [&job, r] {
      ThreadComm comm(job, r);
      MeshOptions o;
      o.session.device = "qpc-no-such-device";
      o.session.host = "host" + std::to_string(r);
      MeshReport report;
      Result<void> v = ConnectMesh(comm, o, &report);
      return std::make_pair(std::move(v), std::move(report));
    }));
  }
  for (int r = 0; r < kRanks; ++r) {
    auto [verdict, report] = ranks[static_cast<size_t>(r)].get();
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_FALSE(verdict);
    EXPECT_EQ(verdict.error().operation, "mesh validate");
    EXPECT_EQ(verdict.error().code, ErrorCode::kNotFound);  // qp-mesh exits 3 on every rank
    EXPECT_NE(verdict.error().detail.find("3 pair(s) failed"), std::string::npos)
        << verdict.error().ToString();
    EXPECT_FALSE(report.ok);
    EXPECT_EQ(report.edges.size(), 2u);
    EXPECT_EQ(report.edges_total, 3u);
    EXPECT_EQ(report.edges_connected, 0u);
    ASSERT_EQ(report.failures.size(), 3u);  // each pair once, whoever reported it
    for (const MeshPairFailure& f : report.failures) {
      EXPECT_LT(f.rank_a, f.rank_b);
      EXPECT_EQ(f.host_a, "host" + std::to_string(f.rank_a));
      // No device here, or none of that name where there are devices.
      EXPECT_NE(f.what.find("[not-found]"), std::string::npos) << f.what;
      EXPECT_NE(f.what.find("on rank " + std::to_string(f.rank_a)), std::string::npos) << f.what;
    }
    for (const MeshEdge& e : report.edges) {
      EXPECT_FALSE(e.connected);
      ASSERT_TRUE(e.error);
      EXPECT_EQ(e.connector, nullptr);
    }
  }
}

TEST(MeshOptionsCli, Defaults) {
  auto o = tools::ParseMeshOptions({});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->mesh.session.transport, Transport::kRc);
  EXPECT_EQ(o->mesh.session.num_qps, 1u);
  EXPECT_EQ(o->mesh.traffic_iters, 10u);
  EXPECT_TRUE(o->mesh.devices.empty());
}

TEST(MeshOptionsCli, DevicesTransportAndSizes) {
  auto o = tools::ParseMeshOptions(
      {"--devices", "rxe0,rxe1", "-t", "uc", "-q", "4", "-m", "2048", "-n", "3", "--json"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->mesh.devices, (std::vector<std::string>{"rxe0", "rxe1"}));
  EXPECT_EQ(o->mesh.session.transport, Transport::kUc);
  EXPECT_EQ(o->mesh.session.num_qps, 4u);
  EXPECT_EQ(o->mesh.session.mtu, Mtu::k2048);
  EXPECT_EQ(o->mesh.traffic_iters, 3u);
  EXPECT_TRUE(o->json);
}

TEST(MeshOptionsCli, UdDefaultsToOneKilobyteDatagrams) {
  auto o = tools::ParseMeshOptions({"-t", "ud"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->mesh.session.message_size, 1024u);
  EXPECT_EQ(o->mesh.traffic_size, 1024u);
  EXPECT_EQ(o->mesh.connect.plan.message_size, 1024u);
}

TEST(MeshOptionsCli, TakesTheProviderCacheFromTheEnvironment) {
  const char* old = std::getenv("QPC_PROVIDER_CACHE");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("QPC_PROVIDER_CACHE", "/var/tmp/providers", 1);
  auto set = tools::ParseMeshOptions({});
  setenv("QPC_PROVIDER_CACHE", "off", 1);
  auto off = tools::ParseMeshOptions({});
  setenv("QPC_PROVIDER_CACHE", "relative", 1);
  auto bad = tools::ParseMeshOptions({});
  if (saved) {
    setenv("QPC_PROVIDER_CACHE", saved->c_str(), 1);
  } else {
    unsetenv("QPC_PROVIDER_CACHE");
  }
  ASSERT_TRUE(set) << set.error().ToString();
  EXPECT_EQ(set->mesh.session.provider_cache, "/var/tmp/providers");
  ASSERT_TRUE(off);
  EXPECT_EQ(off->mesh.session.provider_cache, "");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().attribute, "QPC_PROVIDER_CACHE");
}

TEST(MeshOptionsCli, NoVerifyRunsNoTraffic) {
  auto o = tools::ParseMeshOptions({"--no-verify"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->mesh.traffic_iters, 0u);
}

TEST(MeshOptionsCli, BadInputNamesTheOption) {
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  for (const Case& c : std::vector<Case>{{{"-t", "xrc"}, "xrc"},
                                         {{"-m", "1000"}, "1000"},
                                         {{"--devices", "rxe0,,rxe1"}, "--devices"},
                                         {{"-q", "0"}, "--qps"},
                                         {{"hostB"}, "hostB"},
                                         {{"--bogus"}, "--bogus"}}) {
    auto o = tools::ParseMeshOptions(c.args);
    ASSERT_FALSE(o) << c.args.front();
    EXPECT_EQ(o.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(o.error().ToString().find(c.names), std::string::npos) << o.error().ToString();
  }
}

}  // namespace
}  // namespace qpconnect
