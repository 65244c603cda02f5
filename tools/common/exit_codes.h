// Exit statuses shared by every qpconnect tool (documented in docs/cli.md).
#pragma once

namespace qpconnect::tools {

enum ExitCode : int {
  kExitOk = 0,          // success
  kExitFindings = 1,    // qp-validate: the endpoints have errors
  kExitUsage = 2,       // bad option or argument, or unusable input file
  kExitNoDevice = 3,    // no RDMA device, or the named device/port does not exist
  kExitExchange = 4,    // out-of-band exchange failed (peer, channel, format, auth)
  kExitValidation = 5,  // qp-connect: the validator found errors before any modify
  kExitVerbs = 6,       // a verbs call failed (open, create, modify, ...)
  kExitTraffic = 7,     // verification traffic failed (completion error, mismatch)
  kExitNoPath = 8,  // qp-info --path, qp-connect --path sa: no path, or the partition refuses it
  kExitSa = 9,      // the same: no SM, the SA did not answer, or answered wrongly
};

}  // namespace qpconnect::tools
