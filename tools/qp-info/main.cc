// SPDX-License-Identifier: MIT
#include <iostream>

#include "run.h"
#include "stderr_log.h"

int main(int argc, char** argv) {
  qpconnect::tools::InstallStderrLog("qp-info");
  return qpconnect::tools::RunQpInfo(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                     std::cerr);
}
