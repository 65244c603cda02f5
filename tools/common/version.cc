// SPDX-License-Identifier: MIT
#include "version.h"

#include "qpconnect/oob/codec.h"  // kWireVersion, kWireMinorVersion: constants only
#include "qpconnect/oob/frame.h"  // kFrameVersion: a constant only
#include "qpconnect/rdmacm/protocol_version.h"
#include "qpconnect/version.h"          // LibraryVersion()
#include "qpconnect/version_numbers.h"  // configured by cmake/QpcVersion.cmake

namespace qpconnect::tools {

std::string_view ProjectVersion() { return QPCONNECT_VERSION_STRING; }

std::string VersionText(std::string_view tool) {
  std::string text(tool);
  text += " (qpconnect) ";
  text += ProjectVersion();
  text += "\nLibrary libqpconnect " + std::string(LibraryVersion()) + ", endpoint wire format " +
          std::to_string(oob::kWireVersion) + "." + std::to_string(oob::kWireMinorVersion) +
          ", out-of-band frame " + std::to_string(oob::kFrameVersion) + ", " +
          rdmacm::kProtocolName + " protocol " + std::to_string(rdmacm::kProtocolVersion) + ".\n";
  return text;
}

}  // namespace qpconnect::tools
