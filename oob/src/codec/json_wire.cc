// SPDX-License-Identifier: MIT
// JSON values <-> Protobuf's binary encoding, by the schema tables
// (json_wire.h). The wire side follows the encoding guide: tags are
// (number << 3 | wire type), varints little-endian base 128, sint64 zigzag,
// fixed64 eight bytes little-endian, strings, bytes and messages
// length-delimited; a parser takes packed and unpacked repeated scalars alike.
#include "codec/json_wire.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "codec/base64.h"
#include "codec/json_check.h"

namespace qpconnect::oob::internal {
namespace {

using schema::Field;
using schema::Message;
using schema::Type;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// --- JSON -> wire ------------------------------------------------------------

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void PutTag(std::string& out, const Field& f, WireType wire) {
  PutVarint(out, (uint64_t{f.number} << 3) | wire);
}

void PutLength(std::string& out, const Field& f, std::string_view bytes) {
  PutTag(out, f, kLength);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

// How a value is named in an error: its JSON text, strings quoted.
std::string Shown(const OrderedJson& v) {
  if (v.is_object()) return "(an object)";
  if (v.is_array()) return "(an array)";
  return EscapedText(v.dump(), 60);
}

Error Invalid(const std::string& path, const OrderedJson& v, const Field& f) {
  Error e;
  e.code = ErrorCode::kProtocol;
  e.attribute = path;
  e.detail = "invalid value " + Shown(v) + " for type " + std::string(schema::TypeName(f.type));
  return e;
}

Error Refused(const std::string& path, std::string detail) {
  Error e;
  e.code = ErrorCode::kProtocol;
  e.attribute = path;
  e.detail = std::move(detail);
  return e;
}

// The decimal digits of `s`, '-' first for a negative value, as a value
// within [min, max] (min < 0 < max); nullopt otherwise.
std::optional<int64_t> SignedText(const std::string& s, int64_t min, int64_t max) {
  const bool negative = !s.empty() && s[0] == '-';
  const std::string_view digits = std::string_view(s).substr(negative ? 1 : 0);
  if (digits.empty() || digits.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  const uint64_t limit =
      negative ? static_cast<uint64_t>(-(min + 1)) + 1 : static_cast<uint64_t>(max);
  if (v > limit) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

std::optional<uint64_t> UnsignedText(const std::string& s, uint64_t max) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (v > max) return std::nullopt;
  return v;
}

// A double that holds an integer (what Protobuf's parser takes as one: 1e2, 5.0).
bool Integral(double d) { return std::isfinite(d) && std::trunc(d) == d; }

std::optional<uint64_t> Unsigned(const OrderedJson& v, uint64_t max) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    return u <= max ? std::optional<uint64_t>(u) : std::nullopt;
  }
  if (v.is_number_integer()) return std::nullopt;  // negative
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!Integral(d) || d < 0 || d >= 18446744073709551616.0) return std::nullopt;
    const auto u = static_cast<uint64_t>(d);
    return u <= max ? std::optional<uint64_t>(u) : std::nullopt;
  }
  if (v.is_string()) return UnsignedText(v.get<std::string>(), max);
  return std::nullopt;
}

std::optional<int64_t> Signed(const OrderedJson& v, int64_t min, int64_t max) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    return u <= static_cast<uint64_t>(max) ? std::optional<int64_t>(static_cast<int64_t>(u))
                                           : std::nullopt;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    return i >= min && i <= max ? std::optional<int64_t>(i) : std::nullopt;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!Integral(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
      return std::nullopt;
    }
    const auto i = static_cast<int64_t>(d);
    return i >= min && i <= max ? std::optional<int64_t>(i) : std::nullopt;
  }
  if (v.is_string()) return SignedText(v.get<std::string>(), min, max);
  return std::nullopt;
}

Result<void> PutMessage(std::string& out, const OrderedJson& obj, const Message& type,
                        const std::string& path);

// One value of field `f` (an element, if repeated), not null.
Result<void> PutValue(std::string& out, const OrderedJson& v, const Field& f,
                      const std::string& path) {
  switch (f.type) {
    case Type::kUint32:
    case Type::kUint64: {
      const uint64_t max = f.type == Type::kUint32 ? std::numeric_limits<uint32_t>::max()
                                                   : std::numeric_limits<uint64_t>::max();
      const std::optional<uint64_t> u = Unsigned(v, max);
      if (!u) return Invalid(path, v, f);
      PutTag(out, f, kVarint);
      PutVarint(out, *u);
      return Ok();
    }
    case Type::kSint64: {
      const std::optional<int64_t> i =
          Signed(v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
      if (!i) return Invalid(path, v, f);
      PutTag(out, f, kVarint);
      PutVarint(out, (static_cast<uint64_t>(*i) << 1) ^ static_cast<uint64_t>(*i >> 63));
      return Ok();
    }
    case Type::kFixed64: {
      const std::optional<uint64_t> u = Unsigned(v, std::numeric_limits<uint64_t>::max());
      if (!u) return Invalid(path, v, f);
      PutTag(out, f, kFixed64);
      for (int k = 0; k < 8; ++k) out += static_cast<char>((*u >> (8 * k)) & 0xff);
      return Ok();
    }
    case Type::kBool:
      if (!v.is_boolean()) return Invalid(path, v, f);
      PutTag(out, f, kVarint);
      PutVarint(out, v.get<bool>() ? 1 : 0);
      return Ok();
    case Type::kString:
      if (!v.is_string()) return Invalid(path, v, f);
      PutLength(out, f, v.get_ref<const std::string&>());
      return Ok();
    case Type::kBytes: {
      std::optional<std::string> bytes;
      if (v.is_string()) bytes = Base64DecodeAny(v.get_ref<const std::string&>());
      if (!bytes) return Invalid(path, v, f);
      PutLength(out, f, *bytes);
      return Ok();
    }
    case Type::kEnum: {
      int64_t number = 0;
      if (v.is_string()) {
        const schema::EnumValue* named = f.enumeration->FindByName(v.get<std::string>());
        if (named == nullptr) return Ok();  // skipped, as with ignore_unknown_fields
        number = named->number;
      } else if (v.is_number()) {
        const std::optional<int64_t> i =
            Signed(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
        if (!i) return Invalid(path, v, f);
        number = *i;
      } else {
        return Invalid(path, v, f);
      }
      PutTag(out, f, kVarint);
      PutVarint(out, static_cast<uint64_t>(number));  // negative: ten bytes, as int32 is
      return Ok();
    }
    case Type::kMessage: {
      if (!v.is_object()) {
        return Refused(path, "expected an object for message " + std::string(f.message->name) +
                                 ", not " + Shown(v));
      }
      std::string nested;
      QPC_TRY(PutMessage(nested, v, *f.message, path));
      PutLength(out, f, nested);
      return Ok();
    }
  }
  return Invalid(path, v, f);
}

Result<void> PutMessage(std::string& out, const OrderedJson& obj, const Message& type,
                        const std::string& path) {
  for (const auto& [key, value] : obj.items()) {
    const Field* f = type.FindByKey(key);
    if (f == nullptr || value.is_null()) continue;  // unknown, or absent
    const std::string here =
        path.empty() ? std::string(f->name) : path + "." + std::string(f->name);
    if (!f->repeated) {
      QPC_TRY(PutValue(out, value, *f, here));
      continue;
    }
    if (!value.is_array()) {  // one element, as Protobuf's parser takes it
      QPC_TRY(PutValue(out, value, *f, here));
      continue;
    }
    for (size_t i = 0; i < value.size(); ++i) {
      if (value[i].is_null()) continue;  // skipped, as Protobuf's parser skips it
      QPC_TRY(PutValue(out, value[i], *f, here + "[" + std::to_string(i) + "]"));
    }
  }
  return Ok();
}

// --- wire -> JSON ------------------------------------------------------------

class Reader {
 public:
  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool done() const { return p_ == end_; }

  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ == end_) return false;
      const auto b = static_cast<uint8_t>(*p_++);
      if (shift == 63 && b > 1) return false;  // more than 64 bits
      v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  bool Fixed(int n, uint64_t& v) {
    if (end_ - p_ < n) return false;
    v = 0;
    for (int k = 0; k < n; ++k) v |= uint64_t{static_cast<uint8_t>(p_[k])} << (8 * k);
    p_ += n;
    return true;
  }

  bool Length(std::string_view& out) {
    uint64_t n = 0;
    if (!Varint(n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    out = std::string_view(p_, static_cast<size_t>(n));
    p_ += n;
    return true;
  }

  bool Skip(uint32_t wire) {
    uint64_t ignored = 0;
    std::string_view bytes;
    switch (wire) {
      case kVarint:
        return Varint(ignored);
      case kFixed64:
        return Fixed(8, ignored);
      case kLength:
        return Length(bytes);
      case kFixed32:
        return Fixed(4, ignored);
      default:
        return false;  // groups (3, 4) and reserved wire types
    }
  }

 private:
  const char* p_;
  const char* end_;
};

bool ReadMessage(std::string_view bytes, const Message& type, OrderedJson& out);

uint32_t WireTypeOf(Type t) {
  switch (t) {
    case Type::kFixed64:
      return kFixed64;
    case Type::kString:
    case Type::kBytes:
    case Type::kMessage:
      return kLength;
    default:
      return kVarint;
  }
}

// One scalar value of `f` from `r` (wire type WireTypeOf(f.type)).
bool ReadScalar(Reader& r, const Field& f, OrderedJson& out) {
  uint64_t v = 0;
  if (f.type == Type::kFixed64) {
    if (!r.Fixed(8, v)) return false;
    out = std::to_string(v);
    return true;
  }
  if (!r.Varint(v)) return false;
  switch (f.type) {
    case Type::kUint32:
      out = static_cast<uint32_t>(v);
      return true;
    case Type::kUint64:
      out = std::to_string(v);
      return true;
    case Type::kSint64:
      out = std::to_string(static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1));
      return true;
    case Type::kBool:
      out = v != 0;
      return true;
    case Type::kEnum: {
      const auto number = static_cast<int32_t>(static_cast<uint32_t>(v));
      if (const schema::EnumValue* named = f.enumeration->FindByNumber(number)) {
        out = std::string(named->name);
      } else {
        out = number;
      }
      return true;
    }
    default:
      return false;
  }
}

// The value(s) of `f` at `r`, whose tag had wire type `wire`, appended to
// `values` (one, or several for a packed run).
bool ReadField(Reader& r, const Field& f, uint32_t wire, std::vector<OrderedJson>& values) {
  const uint32_t expected = WireTypeOf(f.type);
  if (wire == kLength && expected != kLength && f.repeated) {  // packed
    std::string_view run;
    if (!r.Length(run)) return false;
    Reader packed(run);
    while (!packed.done()) {
      if (!ReadScalar(packed, f, values.emplace_back())) return false;
    }
    return true;
  }
  if (wire != expected) return false;
  if (expected != kLength) return ReadScalar(r, f, values.emplace_back());
  std::string_view bytes;
  if (!r.Length(bytes)) return false;
  OrderedJson& out = values.emplace_back();
  switch (f.type) {
    case Type::kString:
      out = std::string(bytes);
      return true;
    case Type::kBytes:
      out = Base64Encode(bytes);
      return true;
    default:
      return ReadMessage(bytes, *f.message, out);
  }
}

bool ReadMessage(std::string_view bytes, const Message& type, OrderedJson& out) {
  out = OrderedJson::object();
  Reader r(bytes);
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
    const auto wire = static_cast<uint32_t>(tag & 7);
    const Field* f = type.FindByNumber(static_cast<uint32_t>(tag >> 3));
    if (f == nullptr) {
      if (!r.Skip(wire)) return false;
      continue;
    }
    std::vector<OrderedJson> values;
    if (!ReadField(r, *f, wire, values)) return false;
    const std::string key(f->name);
    if (!f->repeated) {
      out[key] = std::move(values.back());  // the last one wins, as in a parser
      continue;
    }
    OrderedJson& list = out[key];
    if (!list.is_array()) list = OrderedJson::array();
    for (OrderedJson& v : values) list.push_back(std::move(v));
  }
  return true;
}

}  // namespace

Result<std::string> JsonToWire(const OrderedJson& doc, const schema::Message& type) {
  if (!doc.is_object()) return Refused("", "the document is not an object");
  std::string out;
  QPC_TRY(PutMessage(out, doc, type, ""));
  return out;
}

std::optional<OrderedJson> WireToJson(std::string_view bytes, const schema::Message& type) {
  OrderedJson out;
  if (!ReadMessage(bytes, type, out)) return std::nullopt;
  return out;
}

}  // namespace qpconnect::oob::internal
