// Names of the observed-QP model's enumerations (observed.h).
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

}  // namespace qpconnect
