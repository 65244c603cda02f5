// SPDX-License-Identifier: MIT
// The strict first pass over JSON input (json_check.h): nlohmann/json's SAX
// parser, fed through an iterator that tells how far it has read, and a walker
// that keeps the field path and the message type of every open object.
#include "codec/json_check.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace qpconnect::oob::internal {
namespace {

using Json = nlohmann::json;

// A forward iterator over the text that records, in *read, the end of what
// the parser has consumed. At each SAX event that is the end of the token just
// reported (one byte further after a number: the lexer reads one ahead).
class TrackedIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedIterator() = default;
  TrackedIterator(const char* p, const char** read) : p_(p), read_(read) {}
  reference operator*() const { return *p_; }
  TrackedIterator& operator++() {
    ++p_;
    *read_ = p_;
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const TrackedIterator& a, const TrackedIterator& b) {
    return a.p_ == b.p_;
  }

 private:
  const char* p_ = nullptr;
  const char** read_ = nullptr;
};

enum class Kind { kNull, kBool, kNumber, kString, kObject, kArray };

std::string Describe(Kind kind, const std::string* text) {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return text == nullptr ? "a string" : "the string \"" + EscapedText(*text, 40) + "\"";
    case Kind::kObject:
      return "an object";
    case Kind::kArray:
      return "an array";
  }
  return "a value";
}

bool IsBool(const schema::Field* f) { return f != nullptr && f->type == schema::Type::kBool; }

// The SAX handler. In check mode it stops at the first error; in find mode
// at the value whose path is `target`.
class Walker {
 public:
  Walker(std::string_view text, const schema::Message& root, const char* const* read,
         std::optional<std::string_view> target)
      : text_(text), root_(root), read_(read), prev_(text.data()), target_(target) {}

  bool null() { return Scalar(Kind::kNull, nullptr); }
  bool boolean(bool /*value*/) { return Scalar(Kind::kBool, nullptr); }
  bool number_integer(Json::number_integer_t /*value*/) { return Scalar(Kind::kNumber, nullptr); }
  bool number_unsigned(Json::number_unsigned_t /*value*/) { return Scalar(Kind::kNumber, nullptr); }
  bool number_float(Json::number_float_t /*value*/, const Json::string_t& /*text*/) {
    return Scalar(Kind::kNumber, nullptr);
  }
  bool string(Json::string_t& value) { return Scalar(Kind::kString, &value); }
  bool binary(Json::binary_t& /*value*/) { return Scalar(Kind::kString, nullptr); }  // not JSON
  bool start_object(std::size_t /*elements*/) { return Open(Kind::kObject); }
  bool start_array(std::size_t /*elements*/) { return Open(Kind::kArray); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }

  bool key(Json::string_t& key) {
    Frame& f = frames_.back();
    f.field = f.msg != nullptr ? f.msg->FindByKey(key) : nullptr;
    f.name = f.field != nullptr ? std::string(f.field->name) : EscapedText(key, 80);
    f.open = true;
    prev_ = *read_;
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    // The position counts the bytes read, the offending one included. The
    // message starts "[json.exception.parse_error.101] parse error at line 1,
    // column 2: ", which is ours to say (it may also quote raw input).
    std::string what = ex.what();
    if (what.rfind("[json.exception.", 0) == 0) {
      if (size_t colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
    }
    const size_t offset = std::min(position == 0 ? 0 : position - 1, text_.size());
    const std::string path = Path();
    return Fail(offset, (path.empty() ? "" : path + ": ") + "not valid JSON: " + EscapedText(what));
  }

  const std::optional<Error>& error() const { return error_; }
  std::optional<size_t> found() const { return found_; }

 private:
  struct Frame {
    bool array = false;
    const schema::Message* msg = nullptr;    // object: its type, if known
    const schema::Field* element = nullptr;  // array: the repeated field, if known
    bool open = false;                       // a member or element is being read
    std::string name;                        // object: the open member's name
    const schema::Field* field = nullptr;    // object: the open member's field
    size_t index = 0;                        // array: the open or next element
  };

  // The path of the open member or element, as the codec spells it.
  std::string Path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (!f.open) break;  // only the innermost frame can be closed
      if (f.array) {
        p += "[" + std::to_string(f.index) + "]";
      } else {
        if (!p.empty()) p += '.';
        p += f.name;
      }
    }
    return p;
  }

  // Offset of the value now reported: after the previous event's end, the
  // blanks and one ',' or ':' separating them.
  size_t ValueStart() const {
    size_t i = static_cast<size_t>(prev_ - text_.data());
    const auto blanks = [&] {
      while (i < text_.size() &&
             (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) {
        ++i;
      }
    };
    blanks();
    if (i < text_.size() && (text_[i] == ',' || text_[i] == ':')) {
      ++i;
      blanks();
    }
    return std::min(i, text_.size());
  }

  // The field the value now reported belongs to, if known.
  const schema::Field* Field() const {
    const Frame& f = frames_.back();
    return f.array ? f.element : f.field;
  }

  // Starts a member's or element's value; false when it is the one looked for.
  bool Begin(size_t at) {
    Frame& f = frames_.back();
    if (f.array) f.open = true;
    if (target_ && Path() == *target_) {
      found_ = at;
      return false;
    }
    return true;
  }

  // Ends the innermost frame's open member or element.
  void End() {
    Frame& f = frames_.back();
    f.open = false;
    if (f.array) {
      ++f.index;
    } else {
      f.field = nullptr;
    }
  }

  bool Scalar(Kind kind, const std::string* text) {
    const size_t at = ValueStart();
    if (frames_.empty())
      return Fail(at, "the document is " + Describe(kind, text) + ", not an object");
    if (!Begin(at)) return false;
    if (IsBool(Field()) && kind != Kind::kBool && kind != Kind::kNull) {
      return Fail(at, Path() + " must be true or false, not " + Describe(kind, text));
    }
    End();
    prev_ = *read_;
    return true;
  }

  bool Open(Kind kind) {
    const size_t at = ValueStart();
    Frame child;
    child.array = kind == Kind::kArray;
    if (frames_.empty()) {
      if (child.array) return Fail(at, "the document is an array, not an object");
      child.msg = &root_;
    } else {
      if (!Begin(at)) return false;
      if (frames_.size() >= kMaxJsonDepth) {
        return Fail(
            at, Path() + " is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
      }
      const schema::Field* f = Field();
      const bool array_of_field =
          child.array && !frames_.back().array && f != nullptr && f->repeated;
      if (IsBool(f) && !array_of_field) {
        return Fail(at, Path() + " must be true or false, not " + Describe(kind, nullptr));
      }
      if (child.array) {
        child.element = array_of_field ? f : nullptr;
      } else if (f != nullptr && f->type == schema::Type::kMessage) {
        child.msg = f->message;
      }
    }
    frames_.push_back(std::move(child));
    prev_ = *read_;
    return true;
  }

  bool Close() {
    frames_.pop_back();
    if (!frames_.empty()) End();
    prev_ = *read_;
    return true;
  }

  bool Fail(size_t offset, std::string message) {
    Error e;
    e.code = ErrorCode::kProtocol;
    e.attribute = Path();
    e.detail = PositionPrefix(text_, offset) + message;
    error_ = std::move(e);
    return false;
  }

  std::string_view text_;
  const schema::Message& root_;
  const char* const* read_;
  const char* prev_;  // end of the previous event's token
  std::optional<std::string_view> target_;
  std::vector<Frame> frames_;
  std::optional<Error> error_;
  std::optional<size_t> found_;
};

// Runs `walker` over `text`; `read` is the cursor the walker was given.
void Walk(std::string_view text, Walker& walker, const char** read) {
  *read = text.data();
  TrackedIterator first(text.data(), read);
  TrackedIterator last(text.data() + text.size(), read);
  Json::sax_parse(first, last, &walker);
}

}  // namespace

std::string EscapedText(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

TextPosition PositionOf(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  TextPosition p;
  const std::string_view before = text.substr(0, offset);
  p.line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t nl = before.rfind('\n');
  p.column = nl == std::string_view::npos ? offset + 1 : offset - nl;
  return p;
}

std::string PositionPrefix(std::string_view text, size_t offset) {
  const TextPosition p = PositionOf(text, offset);
  return "line " + std::to_string(p.line) + ", column " + std::to_string(p.column) + ": ";
}

Result<void> CheckJson(std::string_view text, const schema::Message& type) {
  const char* read = nullptr;
  Walker walker(text, type, &read, std::nullopt);
  Walk(text, walker, &read);
  if (walker.error()) return *walker.error();
  return Ok();
}

std::optional<size_t> FindJsonPath(std::string_view text, const schema::Message& type,
                                   std::string_view path) {
  const char* read = nullptr;
  Walker walker(text, type, &read, path);
  Walk(text, walker, &read);
  return walker.found();
}

}  // namespace qpconnect::oob::internal
