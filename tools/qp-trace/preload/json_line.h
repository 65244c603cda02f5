// SPDX-License-Identifier: MIT
// One line of a qp-trace file: a JSON object built into a growable buffer.
//
// Part of the preload library, which runs inside programs that do not expect
// it: no exceptions, no C++ runtime beyond what the compiler inlines, no
// allocation through operator new (malloc only), nothing global. An
// allocation failure makes the line unusable (ok() false) instead of throwing.
//
// Thread-safety: one JsonLine per thread (each hook builds its own).
#pragma once

#include <cstddef>
#include <cstdint>

namespace qpconnect::trace_preload {

class JsonLine {
 public:
  JsonLine() = default;
  ~JsonLine();
  JsonLine(const JsonLine&) = delete;
  JsonLine& operator=(const JsonLine&) = delete;

  // Members of the current object (or, with a null key, elements of the
  // current array). Strings are escaped; invalid UTF-8 becomes U+FFFD.
  void Str(const char* key, const char* value);
  void StrN(const char* key, const char* value, size_t n);
  void Int(const char* key, int64_t value);
  void Uint(const char* key, uint64_t value);
  void Bool(const char* key, bool value);
  void Null(const char* key);
  // "0x..." text of a pointer or 64-bit value (JSON numbers lose precision
  // above 2^53 in many readers).
  void Hex(const char* key, uint64_t value);
  // Seconds with microseconds, e.g. 12.000250.
  void Seconds(const char* key, int64_t sec, long nsec);

  void BeginObject(const char* key) { Open(key, '{'); }
  void EndObject() { Close('}'); }
  void BeginArray(const char* key) { Open(key, '['); }
  void EndArray() { Close(']'); }

  // Closes the top-level object and appends '\n'. REQUIRES: every nested
  // object and array ended.
  void Finish();

  bool ok() const { return ok_; }
  const char* data() const { return buf_; }
  size_t size() const { return len_; }

 private:
  void Separator(const char* key);
  void Open(const char* key, char bracket);
  void Close(char bracket);
  void Append(const char* s, size_t n);
  void AppendChar(char c) { Append(&c, 1); }
  void AppendCStr(const char* s);
  void AppendEscaped(const char* s, size_t n);

  char* buf_ = nullptr;
  size_t len_ = 0;
  size_t cap_ = 0;
  bool ok_ = true;
  // Per nesting level: whether a member was written (a comma is due).
  static constexpr int kMaxDepth = 16;
  bool need_comma_[kMaxDepth] = {};
  int depth_ = 0;
  bool started_ = false;
};

}  // namespace qpconnect::trace_preload
