// SPDX-License-Identifier: MIT
// Validator findings as JSON, shared by qp-validate and qp-connect.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "qpconnect/diagnostic.h"

namespace qpconnect::tools {

// ["rc", "uc"]
nlohmann::ordered_json TransportsToJson(TransportSet set);
nlohmann::ordered_json FindingToJson(const Finding& f);
nlohmann::ordered_json FindingsToJson(const std::vector<Finding>& findings);

}  // namespace qpconnect::tools
