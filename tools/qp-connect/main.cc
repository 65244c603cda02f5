#include <iostream>

#include "run.h"

int main(int argc, char** argv) {
  return qpconnect::tools::RunQpConnect(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                        std::cerr);
}
