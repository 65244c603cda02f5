// SPDX-License-Identifier: MIT
#include "qpconnect/version.h"

#ifndef QPC_PROJECT_VERSION
#error "QPC_PROJECT_VERSION is set by qpconnect/CMakeLists.txt"
#endif

namespace qpconnect {

std::string_view LibraryVersion() { return QPC_PROJECT_VERSION; }

}  // namespace qpconnect
