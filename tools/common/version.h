// SPDX-License-Identifier: MIT
// What every tool prints for --version, and the option that asks for it.
//
// The first line is "<tool> (qpconnect) X.Y.Z", the GNU form help2man reads
// when it generates the man pages (docs/packaging.md); the second names the
// version of the qpconnect library linked in (qpconnect/version.h) and every
// wire version this build speaks: the endpoint wire format it writes
// (docs/wire-format.md, "Versioning"), the out-of-band frame (docs/oob.md)
// and libqpcm's protocol (docs/rdmacm.md), as one sentence, since help2man
// ends the page's description with it.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "cli_args.h"

namespace qpconnect::tools {

// The project version, from CMakeLists.txt's project(VERSION): "0.1.0".
std::string_view ProjectVersion();

// "qp-info (qpconnect) 0.1.0\nLibrary libqpconnect 0.1.0, endpoint wire
// format 1.0, out-of-band frame 2, qpcm protocol 6.\n" for tool "qp-info".
std::string VersionText(std::string_view tool);

// The `--version` entry of a tool's option table (no short form: -v and -V
// mean other things to the pingpong programs qp-connect imitates).
constexpr OptionSpec VersionOption() {
  return {0, "version", false, "", "print the version and exit"};
}

}  // namespace qpconnect::tools
