// SPDX-License-Identifier: MIT
// libqpcm's seam (rdmacm/src/path_cache.h): the kernel's RoCE path facts of
// one GID pair are read once per kPathFactsTtl, not once per connection;
// another pair is read on its own; an old reading is read again.
#include "path_cache.h"

#include <gtest/gtest.h>

#include "fakes/fake_env.h"
#include "qpconnect/endpoint.h"

namespace qpconnect::rdmacm {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point fake_now{};
Clock::time_point FakeNow() { return fake_now; }

// Counts ReadPath calls and answers with a route through `netdev`.
class CountingEnv : public testing::FakeEnv {
 public:
  CountingEnv() : FakeEnv("host-a", 1) {}
  std::optional<RocePathFacts> ReadPath(const RocePathQuery& query) override {
    ++reads;
    RocePathFacts f;
    f.query = query;
    f.route_error = "read " + std::to_string(reads);
    return f;
  }
  int reads = 0;
};

RocePathQuery Query(const char* remote) {
  RocePathQuery q;
  q.local = fakes::RoceV2Gid(1, "::ffff:10.99.0.2");
  q.local.netdev = "veth1";
  q.remote = fakes::RoceV2Gid(1, remote).gid;
  return q;
}

TEST(QpcmPathCache, APairIsReadOncePerSecondAnotherOnItsOwn) {
  CountingEnv below;
  LibraryQpEnv env(&below, &FakeNow);
  LibraryLock lock;
  fake_now = Clock::time_point{} + std::chrono::hours(1);
  auto a = env.ReadPath(Query("::ffff:10.99.0.1"));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->route_error, "read 1");
  fake_now += kPathFactsTtl - std::chrono::milliseconds(1);
  EXPECT_EQ(env.ReadPath(Query("::ffff:10.99.0.1"))->route_error, "read 1");  // cached
  EXPECT_EQ(below.reads, 1);
  EXPECT_EQ(env.ReadPath(Query("::ffff:10.99.0.3"))->route_error, "read 2");  // another pair
  fake_now += std::chrono::milliseconds(1);
  EXPECT_EQ(env.ReadPath(Query("::ffff:10.99.0.1"))->route_error, "read 3");  // a second old
  EXPECT_EQ(below.reads, 3);
}

TEST(QpcmPathCache, EverythingElseIsTheSeamBelows) {
  CountingEnv below;
  LibraryQpEnv env(&below, &FakeNow);
  ibv_context ctx{};
  below.SetGidsNow({fakes::RoceV2Gid(3, "::ffff:10.99.0.2")});
  auto gids = env.ReadGids(ctx, 1);
  ASSERT_TRUE(gids);
  ASSERT_EQ(gids->size(), 1u);
  auto at = env.ReadGidAt(ctx, 1, 3);
  ASSERT_TRUE(at);
  ASSERT_TRUE(*at);
  EXPECT_EQ((*at)->index, 3);
}

}  // namespace
}  // namespace qpconnect::rdmacm
