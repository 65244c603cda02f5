// SPDX-License-Identifier: MIT
// A program embedding qpconnect through its installed CMake package: it must
// compile against the installed headers and link either the shared library
// (qpconnect::shared) or all three static targets (CMakeLists.txt builds both).
#include <qpconnect/oob/codec.h>
#include <qpconnect/validate.h>
#include <qpconnect/verbs/device.h>

#include <iostream>

int main() {
  qpconnect::EndpointInfo a;
  a.qps.push_back({0x11, 1, {}});
  auto findings = qpconnect::Validate({&a, &a, std::nullopt, std::nullopt});
  auto back = qpconnect::oob::DecodeJson(qpconnect::oob::EncodeJson(a));
  auto devices = qpconnect::verbs::ListDevices();  // may fail without RDMA: linked is enough
  (void)devices;
  std::cout << "findings " << findings.size() << ", round trip " << (back && *back == a) << "\n";
  return back && *back == a ? 0 : 1;
}
