// SPDX-License-Identifier: MIT
// Pieces of qp-connect's report shared by its two flows (our dialect in
// run.cc, the stock pingpong dialect in pingpong_flow.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "qpconnect/connector.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"

namespace qpconnect::tools {

// One side of the connection for the JSON report (the first 16 QPs listed).
nlohmann::ordered_json SideJson(const EndpointInfo& e);

// Writes the --dump file: this side's description and plan, the peer's
// description. kIo naming the file when it cannot be written.
Result<void> WriteDump(const std::string& path, const EndpointInfo& local,
                       const ConnectionPlan& plan, const EndpointInfo& remote);

// kIo naming `path` when it cannot be opened for writing (checked before the
// exchange; creates the file if missing, leaves an existing one as it is).
Result<void> CheckWritable(const std::string& path);

// {"open": ms, "exchange": ms, "validate": ms, "connect": ms, "barrier": ms}
// (the phases, as since version 1), then the verbs steps inside open and
// connect: "setup", "create", "init", "rtr", "rts" (ms, summed over the QPs).
nlohmann::ordered_json TimingsJson(const PhaseTimings& t);

// The spread of each verbs step over the QPs, in microseconds:
// {"create": {"p50": us, "p99": us}, "init": ..., "rtr": ..., "rts": ...}.
nlohmann::ordered_json PerQpJson(const PhaseTimings& t);

}  // namespace qpconnect::tools
