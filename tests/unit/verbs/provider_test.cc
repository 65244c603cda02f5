// SPDX-License-Identifier: MIT
// The provider cache (verbs/provider_cache.h) and the checks that keep it a
// hint (verbs/provider.h): its text, its file, which paths may be loaded.
// Whether a preload really spares libibverbs its full load is a lab test
// (tests/integration/provider_cache_lab.sh), since it needs a device.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "qpconnect/verbs/provider.h"
#include "qpconnect/verbs/provider_cache.h"

namespace qpconnect::verbs {
namespace {

const std::string kRxe = "/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so";
const std::string kMlx5 = "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/qpc_provider_test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for one scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ProviderCacheText, ParsesDeviceLibraryLinesAndSkipsTheRest) {
  const std::string text =
      "# comment\n"
      "rxe0 " +
      kRxe +
      "\n"
      "\n"
      "no-space-here\n"
      "mlx5_0 relative/libmlx5-rdmav34.so\n"
      "bad/name " +
      kRxe +
      "\n"
      "rxe1 " +
      kRxe +
      " trailing\n"
      "rxe0 " +
      kMlx5 +
      "\n"  // a repeated device: the first wins
      "mlx5_0 " +
      kMlx5;  // no final newline
  const auto entries = ParseProviderCache(text);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0], (ProviderCacheEntry{"rxe0", kRxe}));
  EXPECT_EQ(entries[1], (ProviderCacheEntry{"mlx5_0", kMlx5}));
}

TEST(ProviderCacheText, KeepsAtMostTheCap) {
  std::string text;
  for (size_t i = 0; i < kMaxProviderCacheEntries + 10; ++i) {
    text += "dev" + std::to_string(i) + " " + kRxe + "\n";
  }
  EXPECT_EQ(ParseProviderCache(text).size(), kMaxProviderCacheEntries);
}

TEST(ProviderCacheText, FormatsWhatItParses) {
  const std::vector<ProviderCacheEntry> entries = {{"rxe0", kRxe}, {"mlx5_0", kMlx5}};
  const std::string text = FormatProviderCache(entries);
  EXPECT_EQ(text.rfind("# ", 0), 0u) << text;
  EXPECT_EQ(ParseProviderCache(text), entries);
}

TEST(ProviderCacheText, ListsEachLibraryOnceInOrder) {
  const std::vector<ProviderCacheEntry> entries = {
      {"rxe0", kRxe}, {"mlx5_0", kMlx5}, {"rxe1", kRxe}};
  EXPECT_EQ(CachedLibraries(entries), (std::vector<std::string>{kRxe, kMlx5}));
}

TEST(ProviderCacheText, RemembersOnlyChanges) {
  std::vector<ProviderCacheEntry> entries;
  EXPECT_TRUE(RememberProvider(entries, "rxe0", kRxe));
  EXPECT_FALSE(RememberProvider(entries, "rxe0", kRxe));
  EXPECT_TRUE(RememberProvider(entries, "rxe0", kMlx5));
  EXPECT_EQ(entries, (std::vector<ProviderCacheEntry>{{"rxe0", kMlx5}}));
  EXPECT_FALSE(RememberProvider(entries, "has space", kRxe));
  EXPECT_FALSE(RememberProvider(entries, "rxe1", "relative.so"));
  for (size_t i = entries.size(); i < kMaxProviderCacheEntries; ++i) {
    ASSERT_TRUE(RememberProvider(entries, "dev" + std::to_string(i), kRxe));
  }
  EXPECT_FALSE(RememberProvider(entries, "one-too-many", kRxe));
  EXPECT_EQ(entries.size(), kMaxProviderCacheEntries);
}

TEST(ProviderCacheFile, WritesItsDirectoryPrivateAndReadsBack) {
  TempDir tmp;
  const std::string path = tmp.path() + "/a/b/providers";
  const std::vector<ProviderCacheEntry> entries = {{"rxe0", kRxe}};
  ASSERT_TRUE(WriteProviderCache(path, entries));
  EXPECT_EQ(ReadProviderCache(path), entries);
  struct stat st {};
  ASSERT_EQ(stat((tmp.path() + "/a/b").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // No temporary file is left next to it.
  DIR* dir = opendir((tmp.path() + "/a/b").c_str());
  ASSERT_NE(dir, nullptr);
  int files = 0;
  while (dirent* d = readdir(dir)) files += d->d_name[0] != '.';
  closedir(dir);
  EXPECT_EQ(files, 1);
}

TEST(ProviderCacheFile, ReadsMissingOddOrHugeFilesAsEmpty) {
  TempDir tmp;
  EXPECT_TRUE(ReadProviderCache(tmp.path() + "/missing").empty());
  EXPECT_TRUE(ReadProviderCache(tmp.path()).empty());  // a directory
  const std::string real = tmp.path() + "/real";
  ASSERT_TRUE(WriteProviderCache(real, {{"rxe0", kRxe}}));
  const std::string link = tmp.path() + "/link";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  EXPECT_TRUE(ReadProviderCache(link).empty());  // not followed
  const std::string huge = tmp.path() + "/huge";
  {
    std::ofstream f(huge);
    f << "rxe0 " << kRxe << "\n" << std::string(70 * 1024, '#') << "\n";
  }
  EXPECT_TRUE(ReadProviderCache(huge).empty());
}

TEST(ProviderCacheFile, RefusesARelativePathAndReportsAFailedWrite) {
  auto relative = WriteProviderCache("providers", {});
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error().code, ErrorCode::kInvalidArgument);
  TempDir tmp;
  const std::string file = tmp.path() + "/file";
  std::ofstream(file) << "x";
  auto under_a_file = WriteProviderCache(file + "/providers", {});
  ASSERT_FALSE(under_a_file);
  EXPECT_EQ(under_a_file.error().code, ErrorCode::kIo);
  EXPECT_EQ(under_a_file.error().sys_errno, ENOTDIR);
}

TEST(ProviderCacheFile, DefaultsToTheXdgCacheThenHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(DefaultProviderCachePath(), "/x/cache/qpconnect/providers");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative");
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(DefaultProviderCachePath(), "/home/u/.cache/qpconnect/providers");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(DefaultProviderCachePath(), "");
  }
}

TEST(ProviderPath, AcceptsOnlyProviderNamesInTheProviderDirectory) {
  TempDir tmp;
  const std::string& d = tmp.path();
  EXPECT_TRUE(IsProviderPath(d + "/librxe-rdmav34.so", d));
  EXPECT_TRUE(IsProviderPath(d + "/libvmw_pvrdma-rdmav34.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/libevil.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/librxe-rdmav34.so.1", d));
  EXPECT_FALSE(IsProviderPath(d + "/libRXE-rdmav34.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/lib-rdmav34.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/librxe-rdmav.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/librxe-rdmavx4.so", d));
  EXPECT_FALSE(IsProviderPath("librxe-rdmav34.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/sub/librxe-rdmav34.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/../librxe-rdmav34.so", d));
  EXPECT_FALSE(IsProviderPath("/tmp/librxe-rdmav34.so", d));
  EXPECT_FALSE(IsProviderPath(d + "/librxe-rdmav34.so", ""));
  // Another spelling of the same directory (a symlink to it) counts.
  const std::string alias = d + "-alias";
  ASSERT_EQ(symlink(d.c_str(), alias.c_str()), 0);
  EXPECT_TRUE(IsProviderPath(alias + "/librxe-rdmav34.so", d));
  unlink(alias.c_str());
}

TEST(ProviderPath, TheDirectoryIsLibibverbsOwn) {
  auto dir = ProviderDirectory();
  ASSERT_TRUE(dir) << "dladdr could not name libibverbs";
  EXPECT_EQ(dir->substr(dir->size() - std::string("/libibverbs").size()), "/libibverbs") << *dir;
  EXPECT_EQ(ProviderLibraryOf(nullptr), std::nullopt);
}

TEST(ProviderPreloadTest, RefusesWhatIsNotAProviderAndSkipsWhenAsked) {
  auto dir = ProviderDirectory();
  ASSERT_TRUE(dir);
  ScopedEnv rdmav("RDMAV_DRIVERS", nullptr);
  ScopedEnv ibv("IBV_DRIVERS", nullptr);
  EXPECT_FALSE(PreloadProviders({}).skipped.empty());
  const std::string outside = "/tmp/libevil-rdmav34.so";
  const std::string missing = *dir + "/libnosuchprovider-rdmav34.so";
  ProviderPreload p = PreloadProviders({outside, missing});
  EXPECT_TRUE(p.skipped.empty()) << p.skipped;
  EXPECT_TRUE(p.loaded.empty());
  EXPECT_EQ(p.refused, (std::vector<std::string>{outside, missing}));
  {
    ScopedEnv set("RDMAV_DRIVERS", "/opt/mine");
    ProviderPreload q = PreloadProviders({missing});
    EXPECT_EQ(q.skipped, "RDMAV_DRIVERS is set");
    EXPECT_TRUE(q.refused.empty());
  }
  {
    ScopedEnv set("IBV_DRIVERS", "mine");
    EXPECT_EQ(PreloadProviders({missing}).skipped, "IBV_DRIVERS is set");
  }
}

}  // namespace
}  // namespace qpconnect::verbs
