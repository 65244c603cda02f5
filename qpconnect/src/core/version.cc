// SPDX-License-Identifier: MIT
#include "qpconnect/version.h"

#include "qpconnect/version_numbers.h"  // configured by cmake/QpcVersion.cmake

namespace qpconnect {

std::string_view LibraryVersion() { return QPCONNECT_VERSION_STRING; }

}  // namespace qpconnect
