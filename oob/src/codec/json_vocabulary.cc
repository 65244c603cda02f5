#include "codec/json_vocabulary.h"

#include <google/protobuf/descriptor.h>

#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "codec/json_check.h"
#include "qpconnect/device_info.h"

namespace qpconnect::oob::internal {
namespace {

namespace pb = google::protobuf;
using Json = nlohmann::ordered_json;

// Fields printed as GUIDs (fixed64, host byte order values).
bool IsGuidField(const pb::FieldDescriptor& f) {
  return f.type() == pb::FieldDescriptor::TYPE_FIXED64 &&
         (f.name() == "node_guid" || f.name() == "subnet_prefix");
}

bool IsMtu(const pb::FieldDescriptor& f) {
  return f.cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM && f.enum_type()->name() == "Mtu";
}

// "LinkLayer" -> "LINK_LAYER_".
std::string EnumPrefix(const pb::EnumDescriptor& e) {
  std::string out;
  for (char c : e.name()) {
    if (std::isupper(static_cast<unsigned char>(c)) && !out.empty()) out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out + "_";
}

// "LINK_LAYER_ETHERNET" -> "ethernet".
std::string ReadableName(const pb::EnumValueDescriptor& v) {
  std::string name = v.name();
  const std::string prefix = EnumPrefix(*v.type());
  if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
  for (char& c : name) {
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return name;
}

int MtuBytesOf(const pb::EnumValueDescriptor& v) {
  return v.number() == 0 ? 0 : 128 << v.number();  // MTU_256 = 1 ... MTU_4096 = 5
}

void Readable(Json& value, const pb::FieldDescriptor& f);

void ReadableMessage(Json& obj, const pb::Descriptor& type) {
  if (!obj.is_object()) return;
  for (auto& [key, value] : obj.items()) {
    const pb::FieldDescriptor* f = type.FindFieldByName(key);
    if (f == nullptr) continue;
    if (f->is_repeated() && value.is_array()) {
      for (Json& element : value) Readable(element, *f);
    } else {
      Readable(value, *f);
    }
  }
}

void Readable(Json& value, const pb::FieldDescriptor& f) {
  if (f.cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    ReadableMessage(value, *f.message_type());
  } else if (f.cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM && value.is_string()) {
    const pb::EnumValueDescriptor* v = f.enum_type()->FindValueByName(value.get<std::string>());
    if (v == nullptr) return;
    if (IsMtu(f)) {
      value = MtuBytesOf(*v);
    } else {
      value = ReadableName(*v);
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
std::string Spellings(const pb::FieldDescriptor& f) {
  std::string out;
  const pb::EnumDescriptor& e = *f.enum_type();
  for (int i = 0; i < e.value_count(); ++i) {
    if (e.value(i)->number() == 0) continue;
    if (!out.empty()) out += ", ";
    out += IsMtu(f) ? std::to_string(MtuBytesOf(*e.value(i)))
                    : "\"" + ReadableName(*e.value(i)) + "\"";
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

bool Proto(Json& value, const pb::FieldDescriptor& f, const std::string& path, Refusal& bad);

bool ProtoMessage(Json& obj, const pb::Descriptor& type, const std::string& path, Refusal& bad) {
  if (!obj.is_object()) return true;  // Protobuf's parser names a wrong kind
  for (auto& [key, value] : obj.items()) {
    const pb::FieldDescriptor* f = type.FindFieldByName(key);
    if (f == nullptr) {
      for (int i = 0; i < type.field_count() && f == nullptr; ++i) {
        if (type.field(i)->json_name() == key) f = type.field(i);
      }
    }
    if (f == nullptr) continue;
    const std::string here = Join(path, f->name());
    if (f->is_repeated() && value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        if (!Proto(value[i], *f, here + "[" + std::to_string(i) + "]", bad)) return false;
      }
    } else if (!Proto(value, *f, here, bad)) {
      return false;
    }
  }
  return true;
}

bool Proto(Json& value, const pb::FieldDescriptor& f, const std::string& path, Refusal& bad) {
  if (f.cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    return ProtoMessage(value, *f.message_type(), path, bad);
  }
  if (f.cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
    const pb::EnumDescriptor& e = *f.enum_type();
    if (value.is_number_integer() || value.is_number_unsigned()) {
      const long long n = value.get<long long>();
      if (IsMtu(f) && n >= 256) {
        for (int i = 0; i < e.value_count(); ++i) {
          if (MtuBytesOf(*e.value(i)) == n) {
            value = e.value(i)->name();
            return true;
          }
        }
        bad = {path, "path MTU " + std::to_string(n) + " is not one of " + Spellings(f)};
        return false;
      }
      return true;  // the enum's number: Protobuf's form, checked by its parser
    }
    if (!value.is_string()) return true;
    const std::string s = value.get<std::string>();
    if (e.FindValueByName(s) != nullptr) return true;  // the proto name
    for (int i = 0; i < e.value_count(); ++i) {
      const pb::EnumValueDescriptor& v = *e.value(i);
      if (v.number() != 0 &&
          (ReadableName(v) == s || (IsMtu(f) && std::to_string(MtuBytesOf(v)) == s))) {
        value = v.name();
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

std::string ToReadable(const std::string& proto_json, const pb::Descriptor& type, bool whitespace) {
  Json doc = Json::parse(proto_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return proto_json;
  ReadableMessage(doc, type);
  return whitespace ? doc.dump(1) + "\n" : doc.dump();  // as Protobuf prints
}

Result<std::string> FromReadable(std::string_view text, const pb::Descriptor& type) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::string(text);  // CheckJson has named the fault
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
  return doc.dump();
}

}  // namespace qpconnect::oob::internal
