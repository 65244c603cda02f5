// SPDX-License-Identifier: MIT
#include "device_warmup.h"

#include "mesh_handoff.h"
#include "options.h"
#include "qpconnect/verbs/provider_cache.h"

namespace qpconnect::tools {

bool WarmupWanted(const std::vector<std::string>& args) {
  if (MeshArgs(args)) return false;
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h" || a == "--version" || a.rfind("--gen-psk", 0) == 0) {
      return false;
    }
    // Short flags grouped with -h ("-vh").
    if (a.size() > 2 && a[0] == '-' && a[1] != '-' && a.find('h') != std::string::npos) {
      return false;
    }
  }
  return true;
}

DeviceWarmup::DeviceWarmup(const std::vector<std::string>& args) {
  if (!WarmupWanted(args)) return;
  auto cache = ProviderCacheFromEnv();
  if (!cache) return;
  thread_ = std::thread([path = std::move(*cache)] { verbs::WarmDeviceList(path); });
}

DeviceWarmup::~DeviceWarmup() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace qpconnect::tools
