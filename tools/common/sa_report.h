// SPDX-License-Identifier: MIT
// The subnet administrator's answers as the tools report them: a PathRecord
// as JSON (qp-info --path, qp-connect --path sa). An SA query's failure as an
// exit status: ExitStatus(ExitStage::kPath, e) (exit_codes.h).
#pragma once

#include <nlohmann/json.hpp>

#include "qpconnect/path_record.h"
#include "qpconnect/result.h"

namespace qpconnect::tools {

// Every field, with MTU in bytes and code, rate in Gb/s, the packet
// lifetime in ns and the ACK timeout it gives.
nlohmann::json PathRecordToJson(const PathRecord& record);

}  // namespace qpconnect::tools
