// SPDX-License-Identifier: MIT
// Private to the codec: conversion between the core value types and the
// generated Protobuf messages of qpconnect/oob/v1/endpoint.proto.
//
// The *FromProto functions treat the message as hostile: every value is
// checked before it is narrowed into a core type, every count before the core
// container is sized, and the result is then held to the wire's range rules
// (wire_ranges.h). Errors are kProtocol (kIncompatible for a newer major
// version) with the field path in Error::attribute; the caller sets
// Error::operation.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "qpconnect/endpoint.h"
#include "qpconnect/oob/v1/endpoint.pb.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

// Which of the two representations to write where the schema has both (GIDs
// as 16 bytes or as text; QPs as packed columns or as one message each).
enum class Form { kBinary, kJson };

void EndpointToProto(const EndpointInfo& info, Form form, v1::Endpoint* out);
void PlanToProto(const ConnectionPlan& plan, v1::Plan* out);

// Checks a message's major version: kProtocol if absent (0), kIncompatible if
// newer than kWireVersion. `field` names it ("version", "remote.version").
Result<void> CheckVersion(uint32_t version, const std::string& field);

// Converts and checks an endpoint (version included). Field paths start with
// `prefix` ("" or "remote.").
Result<EndpointInfo> EndpointFromProto(const v1::Endpoint& msg, const std::string& prefix);
Result<ConnectionPlan> PlanFromProto(const v1::Plan& msg, const std::string& prefix);

}  // namespace qpconnect::oob::internal
