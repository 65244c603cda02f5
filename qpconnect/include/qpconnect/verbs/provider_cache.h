// SPDX-License-Identifier: MIT
// The provider cache: a small file that remembers, per RDMA device, the
// libibverbs provider library that served it, so that the next process can
// preload it (verbs/provider.h) and skip loading every other provider.
//
// The file: one "DEVICE LIBRARY" line per device, '#' comments, written
// whole (a temporary file renamed over it) only when an entry changes. It is
// a hint, never trusted: a library that is not a provider path is refused by
// PreloadProviders, a missing or malformed file reads as empty, and a stale
// entry only costs the full load libibverbs would have done anyway.
//
// Thread-safety: the functions are thread-safe; concurrent writers of one
// file each rename a complete file (the last one wins).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/result.h"
#include "qpconnect/verbs/provider.h"

namespace qpconnect::verbs {

struct ProviderCacheEntry {
  std::string device;   // ibv_get_device_name(), e.g. "rxe0"
  std::string library;  // absolute path of the provider library
  bool operator==(const ProviderCacheEntry&) const = default;
};

// At most this many entries are read or kept (a host has a few devices).
inline constexpr size_t kMaxProviderCacheEntries = 64;

// The entries of a cache file's text. Lines that are not "DEVICE LIBRARY"
// (a device name of letters, digits, '_', '-', '.'; an absolute library path
// without spaces) are skipped, as are entries past the cap and repeated
// devices (the first wins).
std::vector<ProviderCacheEntry> ParseProviderCache(std::string_view text);

// The file's text for `entries` (a comment line, then one line each).
std::string FormatProviderCache(const std::vector<ProviderCacheEntry>& entries);

// Each distinct library of `entries`, in order.
std::vector<std::string> CachedLibraries(const std::vector<ProviderCacheEntry>& entries);

// Sets `device`'s library in `entries`. Returns true when that changed them
// (a new device, or a new library for a known one); false when the entry was
// already there, or when the cap is reached.
bool RememberProvider(std::vector<ProviderCacheEntry>& entries, const std::string& device,
                      const std::string& library);

// The entries in the file at `path`; empty when it is missing, unreadable,
// not a regular file or larger than 64 KiB.
std::vector<ProviderCacheEntry> ReadProviderCache(const std::string& path);

// Writes `entries` to `path` (creating its directory, mode 0700, if missing):
// a temporary file next to it, then rename(). kIo with errno on failure.
Result<void> WriteProviderCache(const std::string& path,
                                const std::vector<ProviderCacheEntry>& entries);

// Loads the providers the cache at `path` names (PreloadProviders; none when
// `path` is empty) and has libibverbs build its device list once, so that a
// later OpenDevice() in this process finds the providers loaded. For a
// thread started at once by a program that will open a device
// (qp-connect's main), to overlap that work with its own start: libibverbs
// serialises device lists, so an OpenDevice() meanwhile waits for it.
// What it did is handed on, for the process's first open only and only if
// ready by then: the device list to OpenDevice() (HandDeviceListToOpen()),
// the entries read and the preload's result to TakeWarmedProviders(), so
// that the first Session neither enumerates the devices nor reads and loads
// the cache again.
void WarmDeviceList(const std::string& path);

// What WarmDeviceList() read from its cache file and loaded.
struct WarmedProviders {
  std::vector<ProviderCacheEntry> entries;
  ProviderPreload preload;
};

// The WarmDeviceList(`path`) of this process, to its first caller: nullopt
// when none ran for `path`, when it had not finished at the first call, or
// after that first call. Thread-safe.
std::optional<WarmedProviders> TakeWarmedProviders(const std::string& path);

// The cache the tools use, from QPC_PROVIDER_CACHE: unset, the default file
// (DefaultProviderCachePath()); "off" or empty, none (""); else that
// absolute path. kInvalidArgument for a relative one. For programs that
// want the same switch as the tools.
Result<std::string> ProviderCacheFromEnvironment();

// "$XDG_CACHE_HOME/qpconnect/providers", else "$HOME/.cache/qpconnect/providers"
// (only absolute values of those variables count); empty when neither is set.
std::string DefaultProviderCachePath();

}  // namespace qpconnect::verbs
