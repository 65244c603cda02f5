// SPDX-License-Identifier: MIT
// qp-connect's device-list warm-up (issue 15): libibverbs' first device list
// of a process (its providers loaded, the kernel's devices matched) runs on a
// second thread from the start of main(), while the main thread parses the
// options and sets up the exchange, instead of after them.
//
// Thread-safety: one object, made and destroyed by one thread.
#pragma once

#include <string>
#include <thread>
#include <vector>

namespace qpconnect::tools {

// Whether `args` (qp-connect's, without argv[0]) can lead to opening a device
// here: not --help/-h, --version or --gen-psk (which print or write and
// exit), and not --oob mpi (handed to qp-mesh). A false "yes" only costs a
// thread that loads libibverbs' providers.
bool WarmupWanted(const std::vector<std::string>& args);

class DeviceWarmup {
 public:
  // Starts verbs::WarmDeviceList() with the provider cache of
  // QPC_PROVIDER_CACHE on a thread when WarmupWanted(args) and the variable
  // is usable (else ParseConnectOptions() reports it and nothing starts).
  explicit DeviceWarmup(const std::vector<std::string>& args);
  // Waits for the thread.
  ~DeviceWarmup();
  DeviceWarmup(const DeviceWarmup&) = delete;
  DeviceWarmup& operator=(const DeviceWarmup&) = delete;

  bool started() const { return thread_.joinable(); }

 private:
  std::thread thread_;
};

}  // namespace qpconnect::tools
