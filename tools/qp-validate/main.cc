// SPDX-License-Identifier: MIT
#include <iostream>
#include <string>
#include <vector>

#include "run.h"
#include "stderr_log.h"

int main(int argc, char** argv) {
  qpconnect::tools::InstallStderrLog("qp-validate");
  return qpconnect::tools::qp_validate::Run(std::vector<std::string>(argv + 1, argv + argc),
                                            std::cout, std::cerr);
}
