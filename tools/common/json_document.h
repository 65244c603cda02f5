// SPDX-License-Identifier: MIT
// The frame of every JSON document the tools print (docs/json.md): it starts
// with "schema_version", and an error in it is one object shape everywhere.
// The documents' JSON Schemas are in docs/schemas/; tests validate the tools'
// real output against them.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "qpconnect/result.h"

namespace qpconnect::tools {

// Version of the tools' JSON documents. Bumped when a field is removed,
// renamed or changes meaning; additions keep it.
constexpr int kJsonSchemaVersion = 1;

// {"schema_version": kJsonSchemaVersion}: the first member of a document.
inline nlohmann::ordered_json JsonDocument() {
  return nlohmann::ordered_json{{"schema_version", kJsonSchemaVersion}};
}

// An Error as the tools print it in JSON: code (ErrorCodeName), errno,
// operation, attribute, detail, and the whole line as text prints it.
inline nlohmann::ordered_json ErrorObject(const Error& e) {
  return {{"code", ErrorCodeName(e.code)}, {"errno", e.sys_errno}, {"operation", e.operation},
          {"attribute", e.attribute},      {"detail", e.detail},   {"text", e.ToString()}};
}

}  // namespace qpconnect::tools
