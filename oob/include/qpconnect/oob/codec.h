// SPDX-License-Identifier: MIT
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

#include <cstddef>
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
// Compatible additions made to major version kWireVersion: written in every
// message, accepted whatever its value (docs/wire-format.md, "Versioning").
constexpr uint32_t kWireMinorVersion = 0;

// Caps a decoder enforces. An encoding of kMaxWireQps QPs, each with an MR,
// and a full GID table stays below these sizes, so a carrier may refuse a
// longer frame before allocating it.
constexpr size_t kMaxWireQps = size_t{1} << 20;
constexpr size_t kMaxBinaryBytes = size_t{64} << 20;
constexpr size_t kMaxJsonBytes = size_t{256} << 20;

// Compact binary form (what the tcp exchanger carries). Per-QP cost is a few
// bytes (QPN and PSN varints); port-level facts are written once. The bytes
// are not self-delimiting: a carrier frames them.
// REQUIRES: CheckWireRanges(info) succeeds; otherwise the output is what a
// decoder refuses (the encoders write values as given, they never fail).
std::string EncodeBinary(const EndpointInfo& info);
// Errors: kProtocol (empty, longer than kMaxBinaryBytes, not Protobuf, or a
// field out of range: Error::attribute names it, e.g. "qps[3].psn"),
// kIncompatible (major version newer than kWireVersion).
Result<EndpointInfo> DecodeBinary(std::string_view bytes);

// Protobuf's JSON mapping of the same message (used by --dump and offline
// tools): indented, proto field names, GIDs as IPv6 text, one object per QP.
// Ends with a newline. REQUIRES: as EncodeBinary.
std::string EncodeJson(const EndpointInfo& info);
// The same JSON on one line, without the newline (for line-based carriers).
std::string EncodeJsonLine(const EndpointInfo& info);
// Accepts any JSON form of the message (readable or compact QP and GID forms);
// unknown fields are ignored. Errors as DecodeBinary (cap kMaxJsonBytes).
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
// Errors as DecodeJson; attributes are prefixed ("remote.qps[0].qpn",
// "local.plan.qps[1].retry_cnt").
Result<Dump> DecodeDumpJson(std::string_view text);

// Checks every field of `info` is in range for the wire (24-bit QPN/PSN, valid
// MTU and enums, non-empty QP list, ...). kProtocol with the field named in
// Error::attribute and in the detail ("qps[3].psn 0x1000000 exceeds 24 bits").
// Decoders run it on what they decoded; senders run it before encoding.
Result<void> CheckWireRanges(const EndpointInfo& info);

}  // namespace qpconnect::oob
