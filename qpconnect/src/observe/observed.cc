// SPDX-License-Identifier: MIT
// Names of the observed-QP model's enumerations and QP types (observed.h).
#include "qpconnect/observe/observed.h"

namespace qpconnect {

const char* ObservedSourceName(ObservedSource source) {
  switch (source) {
    case ObservedSource::kTrace:
      return "trace";
    case ObservedSource::kSnapshot:
      return "snapshot";
    case ObservedSource::kDump:
      return "dump";
  }
  return "unknown";
}

std::optional<Transport> TransportOfTypeName(std::string_view type_name) {
  if (type_name == "RC") return Transport::kRc;
  if (type_name == "UC") return Transport::kUc;
  if (type_name == "UD") return Transport::kUd;
  return std::nullopt;
}

}  // namespace qpconnect
