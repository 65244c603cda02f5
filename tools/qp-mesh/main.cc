// SPDX-License-Identifier: MIT
#include <iostream>
#include <string>
#include <vector>

#include "run.h"

int main(int argc, char** argv) {
  return qpconnect::tools::RunQpMesh(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                     std::cerr);
}
