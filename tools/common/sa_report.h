// The subnet administrator's answers as the tools report them: a PathRecord
// as JSON (qp-info --path, qp-connect --path sa) and an SA query's failure as
// an exit status.
#pragma once

#include <nlohmann/json.hpp>

#include "qpconnect/path_record.h"
#include "qpconnect/result.h"

namespace qpconnect::tools {

// Every field, with MTU in bytes and code, rate in Gb/s, the packet
// lifetime in ns and the ACK timeout it gives.
nlohmann::json PathRecordToJson(const PathRecord& record);

// The exit status for a failed SA PathRecord query (qpconnect/sa/
// path_resolver.h's errors): 2 a bad argument, 3 no such port, 8 no path or
// the partition refuses it, 9 otherwise (no SM, the SA silent or answering
// wrongly, a umad failure, an Ethernet port).
int ExitForSaError(const Error& e);

}  // namespace qpconnect::tools
