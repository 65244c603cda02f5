// SPDX-License-Identifier: MIT
// qp-cm: runs an unmodified rdma_cm program with libqpcm.so, the librdmacm API
// over qpconnect's out-of-band exchange, so that it connects without IPoIB,
// the kernel's rdma_cm or an IP address on an RDMA netdev (docs/rdmacm.md).
//
//   qp-cm [-D ADDR=DEV[:PORT],...] [-c FILE] [-k KEYFILE] [-l FILE] [-t MS] [-m MODE]
//         [--] PROGRAM [ARGS...]
//
// qp-cm checks its options, sets QPCM_DEVICES, QPCM_CONFIG, QPCM_PSK_FILE,
// QPCM_LOG and QPCM_TIMEOUT_MS for the library, puts the library in PROGRAM's way
// (LD_PRELOAD, or LD_LIBRARY_PATH with its compat/librdmacm.so.1) and execs
// PROGRAM, which keeps qp-cm's pid, signals and exit status. qp-cm's own
// statuses: 2 bad command line or no library, 126 PROGRAM cannot be run,
// 127 PROGRAM not found.
//
// Thread-safety: Run() execs on success; PrepareLaunch() is a pure function
// of its arguments and the file system.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "launch.h"
#include "qpconnect/result.h"

namespace qpconnect::tools::qp_cm {

using Launch = tools::Launch;  // launch.h

struct LaunchContext {
  std::string self_dir;          // directory of the qp-cm executable
  std::string library_override;  // $QPCM_LIBRARY
  std::string devices;           // $QPCM_DEVICES (kept after qp-cm's own map)
  std::string ld_preload;        // $LD_PRELOAD
  std::string ld_library_path;   // $LD_LIBRARY_PATH
};

LaunchContext CurrentContext();

// kInvalidArgument for a bad command line (naming the option and value),
// kNotFound when libqpcm.so is nowhere to be found.
Result<Launch> PrepareLaunch(const std::vector<std::string>& args, const LaunchContext& context);

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace qpconnect::tools::qp_cm
