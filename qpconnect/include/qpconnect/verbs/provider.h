// SPDX-License-Identifier: MIT
// libibverbs provider libraries: which one serves an open device, and loading
// known ones before the device list so that libibverbs need not load them all.
//
// Why: libibverbs' device list (rdma-core's ibverbs_get_device_list) first
// matches each kernel device against the providers already registered, and
// only when one is left unmatched dlopen()s every provider it has a config
// file for (17 on Debian 12). Under the lab's emulation that load is 35 of
// the 45 ms the first ibv_get_device_list() of a process takes
// (docs/performance.md). A provider loaded beforehand registers itself (its
// constructor), so when it matches every device the rest are never loaded.
// A wrong or stale guess costs nothing: libibverbs then loads them all, as
// without a preload.
//
// Thread-safety: all functions are thread-safe (dlopen/dladdr are).
#pragma once

#include <infiniband/verbs.h>

#include <optional>
#include <string>
#include <vector>

namespace qpconnect::verbs {

// The directory libibverbs loads its providers from: "<directory of
// libibverbs.so.1, symlinks resolved>/libibverbs" (Debian's and rdma-core's
// default VERBS_PROVIDER_DIR). nullopt when it cannot be told.
std::optional<std::string> ProviderDirectory();

// True when `path` may be preloaded: an absolute path directly in
// `provider_dir` (after resolving symlinks in its directory part) whose name
// is "lib<name>-rdmav<N>.so", as libibverbs names providers. Anything else
// (another directory, "..", a different name) is refused, so a cache file
// cannot make a tool load arbitrary code.
bool IsProviderPath(const std::string& path, const std::string& provider_dir);

// The provider library that serves `ctx`: the shared object holding its
// poll_cq (set by the provider when the context was created), when that is a
// provider path (IsProviderPath); nullopt otherwise (a provider linked in
// statically, a custom build elsewhere).
std::optional<std::string> ProviderLibraryOf(ibv_context* ctx);

// What PreloadProviders did.
struct ProviderPreload {
  std::vector<std::string> loaded;   // dlopen()ed (or already loaded)
  std::vector<std::string> refused;  // not provider paths, or dlopen() failed
  std::string skipped;               // why nothing was tried; empty if tried
};

// dlopen()s each provider path (IsProviderPath) with RTLD_NOW, as libibverbs
// does; the handles stay open for the process's life (libibverbs keeps using
// the provider). Does nothing when RDMAV_DRIVERS or IBV_DRIVERS is set (the
// user asked libibverbs for extra drivers, which it loads only in the full
// load a preload may skip) or the provider directory is unknown. Only a call
// before the process's first device list saves anything.
ProviderPreload PreloadProviders(const std::vector<std::string>& paths);

}  // namespace qpconnect::verbs
