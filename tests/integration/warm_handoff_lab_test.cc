// SPDX-License-Identifier: MIT
// The warm-up's hand-off (issue 15, verbs/provider_cache.h, verbs/device.h):
// what WarmDeviceList() did reaches the process's first open only (its
// device list to OpenDevice(), its cache read and preload to the first
// Session) and never a later one, against the lab's real libibverbs.
//
// Device lists are counted by the netlink sockets libibverbs opens to
// enumerate the devices (NETLINK_RDMA, one per list; the open, the queries
// and the netdev addresses use none): this executable interposes socket().
// The hand-off happens once per process, so each case runs in a process of
// its own (gtest's "threadsafe" death-test style re-executes this binary).
#include <dlfcn.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "lab_env.h"
#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/provider.h"
#include "qpconnect/verbs/provider_cache.h"
#include "qpconnect/verbs/session.h"

namespace {

std::atomic<int> g_device_lists{0};

}  // namespace

// Every socket() of the process comes here first (the executable's
// definition precedes libc's); NETLINK_RDMA ones are counted.
extern "C" int socket(int domain, int type, int protocol) {
  using Fn = int (*)(int, int, int);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "socket"));
  if (domain == AF_NETLINK && protocol == NETLINK_RDMA) g_device_lists.fetch_add(1);
  return real(domain, type, protocol);
}

namespace qpconnect::verbs {
namespace {

// A case's checks, run in the child: each failure is printed, and the exit
// status says whether any failed.
class Checks {
 public:
  void Expect(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    failed_ = true;
  }
  void Lists(int want, const std::string& when) {
    const int got = g_device_lists.load();
    Expect(got == want,
           when + ": " + std::to_string(got) + " device list(s), want " + std::to_string(want));
  }
  [[noreturn]] void Exit() { std::exit(failed_ ? 1 : 0); }

 private:
  bool failed_ = false;
};

class WarmHandoffLab : public testing::LabFixture {
 protected:
  void SetUp() override {
    LabFixture::SetUp();
    if (!InLab()) return;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    dir_ = std::filesystem::temp_directory_path() /
           ("qpc-warm-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string Cache() const { return (dir_ / "providers").string(); }
  SessionOptions Options(const std::string& cache) const {
    SessionOptions o;
    o.device = env_.dev0;
    o.provider_cache = cache;
    return o;
  }
  std::filesystem::path dir_;
};

TEST_F(WarmHandoffLab, TheFirstOpenUsesTheWarmListAndTheNextEnumeratesAgain) {
  EXPECT_EXIT(
      {
        Checks c;
        WarmDeviceList("");
        c.Lists(1, "after WarmDeviceList");
        auto first = OpenDevice(env_.dev0);
        c.Expect(static_cast<bool>(first), "the first open failed");
        c.Lists(1, "after the first open");
        auto second = OpenDevice(env_.dev1);
        c.Expect(static_cast<bool>(second), "the second open failed");
        c.Lists(2, "after the second open");
        c.Exit();
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(WarmHandoffLab, AListHandedAfterTheFirstOpenIsNeverUsed) {
  EXPECT_EXIT(
      {
        Checks c;
        auto first = OpenDevice(env_.dev0);
        c.Expect(static_cast<bool>(first), "the first open failed");
        c.Lists(1, "after the first open");
        WarmDeviceList("");  // too late: freed at once
        c.Lists(2, "after WarmDeviceList");
        auto second = OpenDevice(env_.dev0);
        c.Expect(static_cast<bool>(second), "the second open failed");
        c.Lists(3, "after the second open");
        c.Exit();
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(WarmHandoffLab, TheFirstSessionTakesTheWarmedCacheAndListAndWritesTheCache) {
  const std::string cache = Cache();
  EXPECT_EXIT(
      {
        Checks c;
        WarmDeviceList(cache);  // no file yet: nothing preloaded
        auto s = Session::Open(Options(cache));
        c.Expect(static_cast<bool>(s), "Session::Open failed");
        c.Lists(1, "after Session::Open");
        if (s) {
          const ProviderNote& p = (*s)->provider();
          c.Expect(!p.library.empty(), "no provider library known");
          c.Expect(!p.preloaded, "preloaded without a cache file");
          const auto entries = ReadProviderCache(cache);
          c.Expect(entries.size() == 1 && entries[0].device == env_.dev0 &&
                       entries[0].library == p.library,
                   "the cache does not name " + env_.dev0 + "'s library");
        }
        c.Exit();
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(WarmHandoffLab, AWarmedCacheIsPreloadedOnceAndTakenByTheFirstSessionOnly) {
  // A cache naming the lab's Soft-RoCE provider for dev0, written without
  // opening anything (this part runs again in each child, before its case).
  const std::string cache = Cache();
  const std::optional<std::string> providers = ProviderDirectory();
  ASSERT_TRUE(providers) << "libibverbs' provider directory is unknown";
  std::string library;
  for (const auto& f : std::filesystem::directory_iterator(*providers)) {
    const std::string name = f.path().filename().string();
    if (name.rfind("librxe-rdmav", 0) == 0 && f.path().extension() == ".so") library = f.path();
  }
  ASSERT_FALSE(library.empty()) << "no librxe-rdmav*.so in " << *providers;
  ASSERT_TRUE(WriteProviderCache(cache, {{env_.dev0, library}}));
  EXPECT_EXIT(
      {
        Checks c;
        WarmDeviceList(cache);
        auto s = Session::Open(Options(cache));
        c.Expect(static_cast<bool>(s), "Session::Open failed");
        c.Lists(1, "after Session::Open");
        if (s) {
          c.Expect((*s)->provider().preloaded, "the session does not report the preload");
          c.Expect((*s)->provider().library == library, "another library served the device");
        }
        c.Expect(!TakeWarmedProviders(cache), "the warmed cache was handed out twice");
        c.Exit();
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        Checks c;
        WarmDeviceList(cache);
        c.Expect(!TakeWarmedProviders(Cache() + ".other"), "handed out for another path");
        c.Expect(!TakeWarmedProviders(cache), "handed out after the first take");
        c.Exit();
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace qpconnect::verbs
