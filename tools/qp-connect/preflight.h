// SPDX-License-Identifier: MIT
// What qp-connect checks before it opens the device or starts the exchange:
// the inputs the user typed (the --dump file, the peer HOST, the --bind
// address), so that their faults are usage errors (exit 2) naming them, not
// "no RDMA device" (3), "the exchange failed" (4) or a peer left waiting.
// Thread-safety: the functions share no state.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "options.h"
#include "qpconnect/result.h"

namespace qpconnect::tools {

// A fault found before the device is opened: the report's stage and the error.
struct PreflightFault {
  std::string stage;  // "dump" or "exchange"
  Error error;
};

// Checks the --dump file can be opened for writing (creating it if missing),
// and that the tcp client's HOST and the tcp server's --bind address resolve
// to an address. A name the resolver answers for with no address is a usage
// error; a resolver that does not answer within `o.timeout` is not decided
// here (the exchange then fails on it, exit 4). Returns nothing when all pass.
std::optional<PreflightFault> Preflight(const ConnectOptions& o);

// kInvalidArgument naming `option` and the resolver's answer when `host` (a
// name, an IPv4 or IPv6 literal, "[v6]" too) has no address; kTimeout when the
// resolver does not answer within `deadline`. `passive`: an address to listen
// on (AI_PASSIVE).
Result<void> CheckResolves(const std::string& option, const std::string& host, bool passive,
                           std::chrono::milliseconds deadline);

// The exit status for a failed Connector::Open: ExitStage::kOpen's
// (exit_codes.h; buffers this host cannot allocate, operation "allocate
// buffers", are a usage error there), with that error's detail then naming
// --size, --qps and --rx-depth.
int ExitForOpen(Error& e);

}  // namespace qpconnect::tools
