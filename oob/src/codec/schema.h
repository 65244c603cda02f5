// SPDX-License-Identifier: MIT
// Private to the codec: what the JSON form needs to know of the wire schema
// (oob/proto/qpconnect/oob/v1/endpoint.proto), as constant data.
//
// The tools link Protobuf's lite runtime, which has no descriptors and no
// reflection: a full runtime registers descriptor.proto and the JSON support's
// types before main, which was most of a one-pair connect's static
// initialization (docs/performance.md). The readable JSON form is driven by
// these tables instead. They are generated from the .proto at build time
// (oob/proto/schema_gen.cc writes endpoint_schema.{h,cc}), so they cannot
// drift from it, and they are constant-initialized: nothing runs before main.
//
// Thread-safety: immutable data and pure lookups.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace qpconnect::oob::internal::schema {

// The field types the schema uses. schema_gen refuses a .proto with any other
// (the JSON transcoder, json_wire.h, would have to learn it first).
enum class Type : uint8_t {
  kUint32,
  kUint64,
  kSint64,
  kFixed64,
  kBool,
  kString,
  kBytes,
  kEnum,
  kMessage,
};

// The type as Protobuf's FieldDescriptor names it: "TYPE_UINT32".
std::string_view TypeName(Type type);

struct EnumValue {
  std::string_view name;  // "MTU_4096"
  int32_t number;
};

struct Enum {
  std::string_view name;  // "Mtu"
  std::span<const EnumValue> values;

  const EnumValue* FindByName(std::string_view value_name) const;  // nullptr if none
  const EnumValue* FindByNumber(int32_t number) const;             // nullptr if none
};

struct Message;

struct Field {
  std::string_view name;       // the proto name: "grh_required"
  std::string_view json_name;  // Protobuf's lowerCamel JSON name: "grhRequired"
  uint32_t number;
  Type type;
  bool repeated;
  const Message* message;   // type kMessage: the field's message; else nullptr
  const Enum* enumeration;  // type kEnum: the field's enum; else nullptr
};

struct Message {
  std::string_view name;  // "Endpoint"
  std::span<const Field> fields;

  // nullptr if none.
  const Field* FindByName(std::string_view field_name) const;
  const Field* FindByJsonName(std::string_view json_name) const;
  const Field* FindByNumber(uint32_t number) const;
  // The proto name or, failing that, the JSON name (what Protobuf's JSON
  // parser accepts as a key).
  const Field* FindByKey(std::string_view key) const;
};

}  // namespace qpconnect::oob::internal::schema
