// The wire format's codec: EndpointInfo <-> Protobuf bytes and JSON text.
//
// The schema is oob/proto/qpconnect/oob/v1/endpoint.proto, documented in
// docs/wire-format.md. Protobuf types stay out of this header: callers see only
// the core value types. Decoders treat their input as hostile: any byte string
// yields either a value whose every field is in range, or an Error (kProtocol
// for malformed or out-of-range input, kIncompatible for an unsupported
// version); never a crash, and never an allocation proportional to a length
// the input claims before checking it.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"

namespace qpconnect::oob {

// Version of the schema this build writes. A decoder accepts messages with
// version <= kWireVersion (older ones by their documented rules) and refuses
// newer major versions with kIncompatible; unknown fields are ignored.
constexpr uint32_t kWireVersion = 1;

// Compact binary form (what the tcp exchanger carries). Per-QP cost is a few
// bytes (QPN and PSN varints); port-level facts are written once.
std::string EncodeBinary(const EndpointInfo& info);
Result<EndpointInfo> DecodeBinary(std::string_view bytes);

// Protobuf's JSON mapping of the same message (used by --dump and offline tools).
std::string EncodeJson(const EndpointInfo& info);
Result<EndpointInfo> DecodeJson(std::string_view text);

// What one side knows about itself: its description and, if known, the
// attributes it applied or will apply (from qp-connect --dump, or a trace).
struct Side {
  EndpointInfo endpoint;
  std::optional<ConnectionPlan> plan;
};

// A dump file written by `qp-connect --dump FILE`: this side (with its plan)
// and the peer's description as received.
struct Dump {
  Side local;
  std::optional<EndpointInfo> remote;
};

std::string EncodeDumpJson(const Dump& dump);
// Accepts a dump, or a plain endpoint JSON (then local.plan and remote are empty).
Result<Dump> DecodeDumpJson(std::string_view text);

// Checks every field of `info` is in range for the wire (24-bit QPN/PSN, valid
// MTU and enums, non-empty QP list, ...). kProtocol with the field named.
Result<void> CheckWireRanges(const EndpointInfo& info);

}  // namespace qpconnect::oob
