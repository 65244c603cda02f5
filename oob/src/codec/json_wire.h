// SPDX-License-Identifier: MIT
// Private to the codec: Protobuf's JSON mapping of the wire messages without
// Protobuf's reflection. JSON values go to and from the binary encoding,
// driven by the schema tables (schema.h); the codec then parses or
// serializes its lite messages. This does what the full runtime's
// JsonStringToMessage (with ignore_unknown_fields) and MessageToJsonString
// (with preserve_proto_field_names) did; json_wire_parity_test checks the two
// against each other on the real schema.
//
//   integers   uint32 as a JSON number; uint64, sint64, fixed64 as a decimal
//              string. Input: a number with an integral value, or a string of
//              decimal digits ('-' first for sint64), within the type's range.
//   bool       true/false (json_check.h has refused every other spelling).
//   string     a JSON string. bytes: base64, printed with the standard
//              alphabet and padding; input either alphabet, padding optional.
//   enum       the value's proto name; input also its number (any int32: the
//              enums are open). A name the enum lacks is skipped, as Protobuf
//              skips it with ignore_unknown_fields (json_vocabulary.h has
//              refused those already).
//   message    an object. null: the field is absent.
//   repeated   an array, whose null elements are skipped; a single value is
//              taken as an array of one (both as Protobuf's parser does).
//   keys       the proto name or the lowerCamel JSON name; others skipped.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "codec/schema.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

using OrderedJson = nlohmann::ordered_json;

// `doc` (an object in Protobuf's JSON mapping of `type`) as the binary
// encoding of that message. Members are encoded in the order they appear
// (a parser takes the last of a repeated singular field). Errors: kProtocol;
// Error::attribute is the field path as the codec spells it ("qps[1].psn",
// "" for the document), Error::detail what was wrong, without the path:
// `invalid value "x" for type TYPE_UINT32`.
Result<std::string> JsonToWire(const OrderedJson& doc, const schema::Message& type);

// The binary encoding `bytes` of a `type` message in Protobuf's JSON mapping:
// an object with the proto field names, in the order the fields are encoded
// (field-number order for what Protobuf serialized), fields absent from the
// bytes absent from the object. nullopt if `bytes` is not a valid encoding
// (truncated, a varint over ten bytes, a wire type that does not fit its
// field, a group). Fields the schema lacks are skipped.
std::optional<OrderedJson> WireToJson(std::string_view bytes, const schema::Message& type);

}  // namespace qpconnect::oob::internal
