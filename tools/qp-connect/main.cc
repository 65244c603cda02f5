// SPDX-License-Identifier: MIT
#include <iostream>

#include "device_warmup.h"
#include "run.h"
#include "stderr_log.h"

int main(int argc, char** argv) {
  qpconnect::tools::InstallStderrLog("qp-connect");
  const std::vector<std::string> args(argv + 1, argv + argc);
  // The device list builds on a second thread while the options are parsed
  // (joined before main returns).
  const qpconnect::tools::DeviceWarmup warmup(args);
  return qpconnect::tools::RunQpConnect(args, std::cout, std::cerr);
}
