// SPDX-License-Identifier: MIT
// The version of the qpconnect library this code was linked with, as the
// library itself was built: what every tool's --version prints as the
// library's (tools/common/version.h).
//
// Thread-safety: a constant.
#pragma once

#include <string_view>

namespace qpconnect {

// "MAJOR.MINOR.PATCH", CMakeLists.txt's project(VERSION), compiled into the
// library (not the caller's headers).
std::string_view LibraryVersion();

}  // namespace qpconnect
