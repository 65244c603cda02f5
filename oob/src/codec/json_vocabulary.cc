// SPDX-License-Identifier: MIT
#include "codec/json_vocabulary.h"

#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "codec/json_check.h"
#include "qpconnect/device_info.h"

namespace qpconnect::oob::internal {
namespace {

using Json = OrderedJson;
using schema::Field;

// Fields printed as GUIDs (fixed64, host byte order values).
bool IsGuidField(const Field& f) {
  return f.type == schema::Type::kFixed64 && (f.name == "node_guid" || f.name == "subnet_prefix");
}

bool IsMtu(const Field& f) { return f.type == schema::Type::kEnum && f.enumeration->name == "Mtu"; }

// "LinkLayer" -> "LINK_LAYER_".
std::string EnumPrefix(const schema::Enum& e) {
  std::string out;
  for (char c : e.name) {
    if (std::isupper(static_cast<unsigned char>(c)) && !out.empty()) out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out + "_";
}

// "LINK_LAYER_ETHERNET" -> "ethernet".
std::string ReadableName(const schema::Enum& e, const schema::EnumValue& v) {
  std::string name(v.name);
  const std::string prefix = EnumPrefix(e);
  if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
  for (char& c : name) {
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return name;
}

int MtuBytesOf(const schema::EnumValue& v) {
  return v.number == 0 ? 0 : 128 << v.number;  // MTU_256 = 1 ... MTU_4096 = 5
}

void Readable(Json& value, const Field& f);

void ReadableMessage(Json& obj, const schema::Message& type) {
  if (!obj.is_object()) return;
  for (auto& [key, value] : obj.items()) {
    const Field* f = type.FindByName(key);
    if (f == nullptr) continue;
    if (f->repeated && value.is_array()) {
      for (Json& element : value) Readable(element, *f);
    } else {
      Readable(value, *f);
    }
  }
}

void Readable(Json& value, const Field& f) {
  if (f.type == schema::Type::kMessage) {
    ReadableMessage(value, *f.message);
  } else if (f.type == schema::Type::kEnum && value.is_string()) {
    const schema::EnumValue* v = f.enumeration->FindByName(value.get<std::string>());
    if (v == nullptr) return;
    if (IsMtu(f)) {
      value = MtuBytesOf(*v);
    } else {
      value = ReadableName(*f.enumeration, *v);
    }
  } else if (IsGuidField(f) && value.is_string()) {
    value = GuidToString(std::stoull(value.get<std::string>()));
  }
}

// --- input ------------------------------------------------------------------

struct Refusal {
  std::string path;
  std::string detail;
};

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Accepted spellings of `e`'s values, for an error.
std::string Spellings(const Field& f) {
  std::string out;
  const schema::Enum& e = *f.enumeration;
  for (const schema::EnumValue& v : e.values) {
    if (v.number == 0) continue;
    if (!out.empty()) out += ", ";
    out += IsMtu(f) ? std::to_string(MtuBytesOf(v)) : "\"" + ReadableName(e, v) + "\"";
  }
  return out;
}

// "0002:c903:00a1:b2c4" -> value; false if not that form.
bool ParseGuidText(const std::string& s, uint64_t& out) {
  if (s.size() != 19) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (i % 5 == 4) {
      if (c != ':') return false;
      continue;
    }
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    v = (v << 4) |
        static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c))
                                  ? c - '0'
                                  : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
  }
  out = v;
  return true;
}

bool Proto(Json& value, const Field& f, const std::string& path, Refusal& bad);

bool ProtoMessage(Json& obj, const schema::Message& type, const std::string& path, Refusal& bad) {
  if (!obj.is_object()) return true;  // the transcoder names a wrong kind (json_wire.h)
  for (auto& [key, value] : obj.items()) {
    const Field* f = type.FindByKey(key);
    if (f == nullptr) continue;
    const std::string here = Join(path, std::string(f->name));
    if (f->repeated && value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        if (!Proto(value[i], *f, here + "[" + std::to_string(i) + "]", bad)) return false;
      }
    } else if (!Proto(value, *f, here, bad)) {
      return false;
    }
  }
  return true;
}

bool Proto(Json& value, const Field& f, const std::string& path, Refusal& bad) {
  if (f.type == schema::Type::kMessage) return ProtoMessage(value, *f.message, path, bad);
  if (f.type == schema::Type::kEnum) {
    const schema::Enum& e = *f.enumeration;
    if (value.is_number_integer() || value.is_number_unsigned()) {
      const long long n = value.get<long long>();
      if (IsMtu(f) && n >= 256) {
        for (const schema::EnumValue& v : e.values) {
          if (MtuBytesOf(v) == n) {
            value = std::string(v.name);
            return true;
          }
        }
        bad = {path, "path MTU " + std::to_string(n) + " is not one of " + Spellings(f)};
        return false;
      }
      return true;  // the enum's number: Protobuf's form, checked by the transcoder
    }
    if (!value.is_string()) return true;
    const std::string s = value.get<std::string>();
    if (e.FindByName(s) != nullptr) return true;  // the proto name
    for (const schema::EnumValue& v : e.values) {
      if (v.number != 0 &&
          (ReadableName(e, v) == s || (IsMtu(f) && std::to_string(MtuBytesOf(v)) == s))) {
        value = std::string(v.name);
        return true;
      }
    }
    bad = {path, "\"" + EscapedText(s, 40) + "\" is not one of " + Spellings(f)};
    return false;
  }
  if (IsGuidField(f) && value.is_string()) {
    const std::string s = value.get<std::string>();
    uint64_t v = 0;
    if (s.find(':') != std::string::npos) {
      if (!ParseGuidText(s, v)) {
        bad = {path, "\"" + EscapedText(s, 40) +
                         "\" is not a GUID (four groups of four hex digits: 0002:c903:00a1:b2c4)"};
        return false;
      }
      value = std::to_string(v);
    }
  }
  return true;
}

}  // namespace

void ToReadable(Json& doc, const schema::Message& type) { ReadableMessage(doc, type); }

Result<Json> FromReadable(std::string_view text, const schema::Message& type) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {  // CheckJson refuses this first, naming the place
    Error e;
    e.code = ErrorCode::kProtocol;
    e.detail = "not valid JSON";
    return e;
  }
  Refusal bad;
  if (!ProtoMessage(doc, type, "", bad)) {
    Error e;
    e.code = ErrorCode::kProtocol;
    e.attribute = bad.path;
    e.detail = bad.path + ": " + bad.detail;
    if (auto at = FindJsonPath(text, type, bad.path)) {
      e.detail = PositionPrefix(text, *at) + e.detail;
    }
    return e;
  }
  return doc;
}

}  // namespace qpconnect::oob::internal
