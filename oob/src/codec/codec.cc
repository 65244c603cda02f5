// SPDX-License-Identifier: MIT
// The public codec: framing-free encode/decode of endpoints and dumps.
// Conversion and range rules live in convert.cc and wire_ranges.cc.
#include "qpconnect/oob/codec.h"

#include "codec/convert.h"
#include "codec/json_check.h"
#include "codec/json_vocabulary.h"
#include "codec/json_wire.h"
#include "codec/wire_ranges.h"
#include "qpconnect/oob/v1/endpoint_schema.h"

namespace qpconnect::oob {
namespace {

using internal::Form;
using internal::OrderedJson;

constexpr char kDecodeBinary[] = "decode endpoint (binary)";
constexpr char kDecodeJson[] = "decode endpoint (json)";
constexpr char kDecodeDump[] = "decode dump (json)";

Error InputError(const char* operation, std::string detail) {
  Error e;
  e.code = ErrorCode::kProtocol;
  e.operation = operation;
  e.detail = std::move(detail);
  return e;
}

template <typename T>
Result<T> WithOperation(Result<T> r, const char* operation) {
  if (r) return r;
  Error e = std::move(r).error();
  e.operation = operation;
  return e;
}

// Puts "line L, column C: " before the detail of an error about JSON `text`
// when the field it names (Error::attribute) is in the text.
Error Located(Error e, std::string_view text, const internal::schema::Message& type) {
  if (e.attribute.empty() || e.detail.rfind("line ", 0) == 0) return e;
  if (std::optional<size_t> at = internal::FindJsonPath(text, type, e.attribute)) {
    e.detail = internal::PositionPrefix(text, *at) + e.detail;
  }
  return e;
}

template <typename T>
Result<T> LocatedIn(Result<T> r, std::string_view text, const internal::schema::Message& type) {
  if (r) return r;
  return Located(std::move(r).error(), text, type);
}

Result<void> CheckSize(std::string_view input, size_t cap, const char* operation) {
  if (input.empty()) return InputError(operation, "input is empty");
  if (input.size() > cap) {
    return InputError(operation, "input is " + std::to_string(input.size()) +
                                     " bytes long, more than the cap of " + std::to_string(cap));
  }
  return Ok();
}

// The JSON `text` of a `type` message parsed into `msg`: the strict pass of
// json_check.h (which gives syntax errors a line and column, and refuses
// booleans in any form but true/false), the readable vocabulary turned into
// Protobuf's JSON mapping (json_vocabulary.h), that mapping turned into the
// binary encoding (json_wire.h), which the lite message parses. What the
// transcoder refuses (a string for a number, a number out of range) is named
// as "PATH: not valid JSON for this message: what", and located.
Result<void> ParseJson(std::string_view text, const internal::schema::Message& type,
                       google::protobuf::MessageLite* msg, const char* operation) {
  QPC_TRY(WithOperation(internal::CheckJson(text, type), operation));
  Result<OrderedJson> doc = internal::FromReadable(text, type);
  if (!doc) return WithOperation(Result<void>(std::move(doc).error()), operation);
  Result<std::string> bytes = internal::JsonToWire(*doc, type);
  if (!bytes) {
    Error e = std::move(bytes).error();
    e.operation = operation;
    e.detail = "not valid JSON for this message: " + e.detail;
    if (!e.attribute.empty()) e.detail = e.attribute + ": " + e.detail;
    return Located(std::move(e), text, type);
  }
  if (!msg->ParseFromString(*bytes)) {  // not expected: the JSON was UTF-8 checked
    return InputError(operation, "not valid JSON for this message: Protobuf refused its encoding");
  }
  return Ok();
}

// `msg` (a `type` message) in the readable JSON form: indented by one space
// and ending with a newline when `whitespace`, else on one line.
std::string PrintJson(const google::protobuf::MessageLite& msg,
                      const internal::schema::Message& type, bool whitespace) {
  std::optional<OrderedJson> doc = internal::WireToJson(msg.SerializeAsString(), type);
  if (!doc) return {};
  internal::ToReadable(*doc, type);
  try {
    return whitespace ? doc->dump(1) + "\n" : doc->dump();
  } catch (const OrderedJson::type_error&) {
    return {};  // a string that is not UTF-8, which CheckWireRanges refuses
  }
}

std::string EncodeEndpointJson(const EndpointInfo& info, bool whitespace) {
  v1::Endpoint msg;
  internal::EndpointToProto(info, Form::kJson, &msg);
  return PrintJson(msg, internal::schema::kEndpoint, whitespace);
}

}  // namespace

std::string EncodeBinary(const EndpointInfo& info) {
  v1::Endpoint msg;
  internal::EndpointToProto(info, Form::kBinary, &msg);
  return msg.SerializeAsString();
}

Result<EndpointInfo> DecodeBinary(std::string_view bytes) {
  QPC_TRY(CheckSize(bytes, kMaxBinaryBytes, kDecodeBinary));
  v1::Endpoint msg;
  if (!msg.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InputError(kDecodeBinary,
                      "input is not a Protobuf Endpoint message (truncated, corrupt, a string "
                      "that is not UTF-8, or not Protobuf)");
  }
  return WithOperation(internal::EndpointFromProto(msg, ""), kDecodeBinary);
}

std::string EncodeJson(const EndpointInfo& info) { return EncodeEndpointJson(info, true); }

std::string EncodeJsonLine(const EndpointInfo& info) { return EncodeEndpointJson(info, false); }

Result<EndpointInfo> DecodeJson(std::string_view text) {
  QPC_TRY(CheckSize(text, kMaxJsonBytes, kDecodeJson));
  v1::Endpoint msg;
  QPC_TRY(ParseJson(text, internal::schema::kEndpoint, &msg, kDecodeJson));
  return WithOperation(
      LocatedIn(internal::EndpointFromProto(msg, ""), text, internal::schema::kEndpoint),
      kDecodeJson);
}

std::string EncodeDumpJson(const Dump& dump) {
  v1::Dump msg;
  msg.set_version(kWireVersion);
  v1::Side* local = msg.mutable_local();
  internal::EndpointToProto(dump.local.endpoint, Form::kJson, local->mutable_endpoint());
  if (dump.local.plan) internal::PlanToProto(*dump.local.plan, local->mutable_plan());
  if (dump.remote) internal::EndpointToProto(*dump.remote, Form::kJson, msg.mutable_remote());
  return PrintJson(msg, internal::schema::kDump, true);
}

namespace {

// The dump in `msg`, parsed from `text`.
Result<Dump> DumpFromProto(const v1::Dump& msg, std::string_view text) {
  Dump dump;
  if (!msg.has_local()) {
    // A plain endpoint: its fields are unknown to Dump and were skipped.
    if (msg.has_remote()) {
      return InputError(kDecodeDump, "local is missing (a dump has local, remote is optional)");
    }
    Result<EndpointInfo> endpoint = DecodeJson(text);
    if (!endpoint) return WithOperation(std::move(endpoint), kDecodeDump).error();
    dump.local.endpoint = std::move(*endpoint);
    return dump;
  }
  Result<void> version = internal::CheckVersion(msg.version(), "version");
  if (!version) return WithOperation(std::move(version), kDecodeDump).error();
  if (!msg.local().has_endpoint()) {
    return InputError(kDecodeDump, "local.endpoint is missing");
  }
  Result<EndpointInfo> local =
      internal::EndpointFromProto(msg.local().endpoint(), "local.endpoint.");
  if (!local) return WithOperation(std::move(local), kDecodeDump).error();
  dump.local.endpoint = std::move(*local);
  if (msg.local().has_plan()) {
    Result<ConnectionPlan> plan = internal::PlanFromProto(msg.local().plan(), "local.plan.");
    if (!plan) return WithOperation(std::move(plan), kDecodeDump).error();
    dump.local.plan = std::move(*plan);
  }
  if (msg.has_remote()) {
    Result<EndpointInfo> remote = internal::EndpointFromProto(msg.remote(), "remote.");
    if (!remote) return WithOperation(std::move(remote), kDecodeDump).error();
    dump.remote = std::move(*remote);
  }
  return dump;
}

}  // namespace

Result<Dump> DecodeDumpJson(std::string_view text) {
  QPC_TRY(CheckSize(text, kMaxJsonBytes, kDecodeDump));
  v1::Dump msg;
  QPC_TRY(ParseJson(text, internal::schema::kDump, &msg, kDecodeDump));
  return LocatedIn(DumpFromProto(msg, text), text, internal::schema::kDump);
}

Result<void> CheckWireRanges(const EndpointInfo& info) {
  Result<void> r = internal::CheckEndpointRanges(info, "");
  if (r) return r;
  Error e = std::move(r).error();
  e.operation = "check endpoint for the wire";
  return e;
}

}  // namespace qpconnect::oob
