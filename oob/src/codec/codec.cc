// The public codec: framing-free encode/decode of endpoints and dumps.
// Conversion and range rules live in convert.cc and wire_ranges.cc.
#include "qpconnect/oob/codec.h"

#include <google/protobuf/util/json_util.h>

#include "codec/convert.h"
#include "codec/wire_ranges.h"

namespace qpconnect::oob {
namespace {

namespace pbu = google::protobuf::util;
using internal::Form;

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

// The parser's message, made safe to print: it may quote the input.
std::string ParserMessage(std::string_view message) {
  constexpr size_t kMax = 200;
  std::string s;
  for (char c : message.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    s += (u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  if (message.size() > kMax) s += "...";
  return s;
}

Result<void> CheckSize(std::string_view input, size_t cap, const char* operation) {
  if (input.empty()) return InputError(operation, "input is empty");
  if (input.size() > cap) {
    return InputError(operation, "input is " + std::to_string(input.size()) +
                                     " bytes long, more than the cap of " + std::to_string(cap));
  }
  return Ok();
}

Result<void> ParseJson(std::string_view text, google::protobuf::Message* msg,
                       const char* operation) {
  pbu::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status = pbu::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), msg, options);
  if (!status.ok()) {
    return InputError(operation, "input is not valid JSON for this message: " +
                                     ParserMessage(status.message().as_string()));
  }
  return Ok();
}

std::string PrintJson(const google::protobuf::Message& msg, bool whitespace) {
  pbu::JsonPrintOptions options;
  options.add_whitespace = whitespace;
  options.preserve_proto_field_names = true;
  std::string out;
  // Printing fails only for invalid UTF-8, which CheckWireRanges refuses.
  if (!pbu::MessageToJsonString(msg, &out, options).ok()) return {};
  return out;
}

std::string EncodeEndpointJson(const EndpointInfo& info, bool whitespace) {
  v1::Endpoint msg;
  internal::EndpointToProto(info, Form::kJson, &msg);
  return PrintJson(msg, whitespace);
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
  QPC_TRY(ParseJson(text, &msg, kDecodeJson));
  return WithOperation(internal::EndpointFromProto(msg, ""), kDecodeJson);
}

std::string EncodeDumpJson(const Dump& dump) {
  v1::Dump msg;
  msg.set_version(kWireVersion);
  v1::Side* local = msg.mutable_local();
  internal::EndpointToProto(dump.local.endpoint, Form::kJson, local->mutable_endpoint());
  if (dump.local.plan) internal::PlanToProto(*dump.local.plan, local->mutable_plan());
  if (dump.remote) internal::EndpointToProto(*dump.remote, Form::kJson, msg.mutable_remote());
  return PrintJson(msg, true);
}

Result<Dump> DecodeDumpJson(std::string_view text) {
  QPC_TRY(CheckSize(text, kMaxJsonBytes, kDecodeDump));
  v1::Dump msg;
  QPC_TRY(ParseJson(text, &msg, kDecodeDump));
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

Result<void> CheckWireRanges(const EndpointInfo& info) {
  Result<void> r = internal::CheckEndpointRanges(info, "");
  if (r) return r;
  Error e = std::move(r).error();
  e.operation = "check endpoint for the wire";
  return e;
}

}  // namespace qpconnect::oob
