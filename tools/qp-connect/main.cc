#include <iostream>

#include "run.h"
#include "stderr_log.h"

int main(int argc, char** argv) {
  qpconnect::tools::InstallStderrLog("qp-connect");
  return qpconnect::tools::RunQpConnect(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                        std::cerr);
}
