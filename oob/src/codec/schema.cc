// SPDX-License-Identifier: MIT
#include "codec/schema.h"

namespace qpconnect::oob::internal::schema {

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kUint32:
      return "TYPE_UINT32";
    case Type::kUint64:
      return "TYPE_UINT64";
    case Type::kSint64:
      return "TYPE_SINT64";
    case Type::kFixed64:
      return "TYPE_FIXED64";
    case Type::kBool:
      return "TYPE_BOOL";
    case Type::kString:
      return "TYPE_STRING";
    case Type::kBytes:
      return "TYPE_BYTES";
    case Type::kEnum:
      return "TYPE_ENUM";
    case Type::kMessage:
      return "TYPE_MESSAGE";
  }
  return "TYPE_UNKNOWN";
}

const EnumValue* Enum::FindByName(std::string_view value_name) const {
  for (const EnumValue& v : values) {
    if (v.name == value_name) return &v;
  }
  return nullptr;
}

const EnumValue* Enum::FindByNumber(int32_t number) const {
  for (const EnumValue& v : values) {
    if (v.number == number) return &v;
  }
  return nullptr;
}

const Field* Message::FindByName(std::string_view field_name) const {
  for (const Field& f : fields) {
    if (f.name == field_name) return &f;
  }
  return nullptr;
}

const Field* Message::FindByJsonName(std::string_view json_name) const {
  for (const Field& f : fields) {
    if (f.json_name == json_name) return &f;
  }
  return nullptr;
}

const Field* Message::FindByNumber(uint32_t number) const {
  for (const Field& f : fields) {
    if (f.number == number) return &f;
  }
  return nullptr;
}

const Field* Message::FindByKey(std::string_view key) const {
  const Field* f = FindByName(key);
  return f != nullptr ? f : FindByJsonName(key);
}

}  // namespace qpconnect::oob::internal::schema
