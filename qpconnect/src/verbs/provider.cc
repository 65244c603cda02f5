// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/provider.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>

namespace qpconnect::verbs {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::optional<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> real(realpath(path.c_str(), nullptr), &std::free);
  if (!real) return std::nullopt;
  return std::string(real.get());
}

// "lib<name>-rdmav<N>.so": name of lower-case letters, digits and '_'.
bool IsProviderFileName(const std::string& base) {
  constexpr std::string_view kPrefix = "lib";
  constexpr std::string_view kMiddle = "-rdmav";
  constexpr std::string_view kSuffix = ".so";
  if (base.size() <= kPrefix.size() + kMiddle.size() + kSuffix.size()) return false;
  if (base.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  if (base.compare(base.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return false;
  const size_t middle = base.rfind(kMiddle);
  if (middle == std::string::npos || middle <= kPrefix.size()) return false;
  for (size_t i = kPrefix.size(); i < middle; ++i) {
    const char c = base[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  const size_t digits = middle + kMiddle.size();
  const size_t digits_end = base.size() - kSuffix.size();
  if (digits == digits_end) return false;
  for (size_t i = digits; i < digits_end; ++i) {
    if (base[i] < '0' || base[i] > '9') return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> ProviderDirectory() {
  Dl_info info{};
  // Any libibverbs function: dladdr names the object that holds it.
  if (dladdr(reinterpret_cast<void*>(&ibv_get_device_list), &info) == 0 ||
      info.dli_fname == nullptr) {
    return std::nullopt;
  }
  auto real = RealPath(info.dli_fname);
  if (!real) return std::nullopt;
  return DirectoryOf(*real) + "/libibverbs";
}

bool IsProviderPath(const std::string& path, const std::string& provider_dir) {
  if (path.empty() || path[0] != '/' || provider_dir.empty()) return false;
  if (!IsProviderFileName(BaseOf(path))) return false;
  const std::string dir = DirectoryOf(path);
  if (dir == provider_dir) return true;
  // The same directory under another spelling (Debian's /lib -> usr/lib).
  auto real_dir = RealPath(dir);
  auto real_provider_dir = RealPath(provider_dir);
  return real_dir && real_provider_dir && *real_dir == *real_provider_dir;
}

std::optional<std::string> ProviderLibraryOf(ibv_context* ctx) {
  if (ctx == nullptr || ctx->ops.poll_cq == nullptr) return std::nullopt;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(ctx->ops.poll_cq), &info) == 0 || info.dli_fname == nullptr) {
    return std::nullopt;
  }
  auto dir = ProviderDirectory();
  const std::string path = info.dli_fname;
  if (!dir || !IsProviderPath(path, *dir)) return std::nullopt;
  return path;
}

ProviderPreload PreloadProviders(const std::vector<std::string>& paths) {
  ProviderPreload out;
  if (paths.empty()) {
    out.skipped = "no provider library is known";
    return out;
  }
  for (const char* var : {"RDMAV_DRIVERS", "IBV_DRIVERS"}) {
    if (std::getenv(var) != nullptr) {
      out.skipped = std::string(var) + " is set";
      return out;
    }
  }
  auto dir = ProviderDirectory();
  if (!dir) {
    out.skipped = "libibverbs' provider directory is unknown";
    return out;
  }
  for (const std::string& path : paths) {
    if (!IsProviderPath(path, *dir)) {
      out.refused.push_back(path);
      continue;
    }
    // Never closed: libibverbs keeps calling into the provider it registers.
    if (dlopen(path.c_str(), RTLD_NOW) == nullptr) {
      out.refused.push_back(path);
      continue;
    }
    out.loaded.push_back(path);
  }
  return out;
}

}  // namespace qpconnect::verbs
