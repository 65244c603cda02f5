// SPDX-License-Identifier: MIT
// qp-connect --wire pingpong: stand in for either side of rdma-core's stock
// ibv_rc_pingpong, ibv_uc_pingpong or ibv_ud_pingpong (docs/interop.md).
#pragma once

#include <ostream>

#include "options.h"

namespace qpconnect::tools {

// Runs the pingpong dialect in the stock order (qpconnect/oob/pingpong.h):
//   client: open (INIT, receives posted), connect, write record, read the
//           server's, write "done", validate, RTR+RTS, ping-pong;
//   server: open, accept, read the client's record, validate, RTR+RTS, write
//           record, read "done", ping-pong.
// The peer's MTU, message size, iterations, SL and P_Key are not on the wire:
// they are assumed equal to this side's and reported as not checked. Returns
// the exit status (tools/common/exit_codes.h).
// REQUIRES: o.wire == WireKind::kPingpong, o.oob == OobKind::kTcp.
int RunPingpongFlow(const ConnectOptions& o, std::ostream& out, std::ostream& err);

}  // namespace qpconnect::tools
