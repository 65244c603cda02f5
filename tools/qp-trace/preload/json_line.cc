// SPDX-License-Identifier: MIT
#include "json_line.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace qpconnect::trace_preload {
namespace {

// Length of the valid UTF-8 sequence at s[0..n), or 0 if it is not one.
size_t Utf8Length(const unsigned char* s, size_t n) {
  const unsigned char c = s[0];
  size_t len = 0;
  uint32_t min = 0;
  uint32_t cp = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2, min = 0x80, cp = c & 0x1fu;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3, min = 0x800, cp = c & 0x0fu;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4, min = 0x10000, cp = c & 0x07u;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

}  // namespace

JsonLine::~JsonLine() { std::free(buf_); }

void JsonLine::Append(const char* s, size_t n) {
  if (!ok_) return;
  if (len_ + n + 1 > cap_) {
    size_t cap = cap_ == 0 ? 512 : cap_;
    while (len_ + n + 1 > cap) cap *= 2;
    char* grown = static_cast<char*>(std::realloc(buf_, cap));
    if (grown == nullptr) {
      ok_ = false;
      return;
    }
    buf_ = grown;
    cap_ = cap;
  }
  std::memcpy(buf_ + len_, s, n);
  len_ += n;
  buf_[len_] = '\0';
}

void JsonLine::AppendCStr(const char* s) { Append(s, std::strlen(s)); }

void JsonLine::AppendEscaped(const char* s, size_t n) {
  AppendChar('"');
  const auto* u = reinterpret_cast<const unsigned char*>(s);
  for (size_t i = 0; i < n;) {
    const unsigned char c = u[i];
    if (c == '"' || c == '\\') {
      const char esc[2] = {'\\', static_cast<char>(c)};
      Append(esc, 2);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      AppendCStr(esc);
      ++i;
    } else if (c < 0x80) {
      AppendChar(static_cast<char>(c));
      ++i;
    } else if (size_t len = Utf8Length(u + i, n - i); len != 0) {
      Append(s + i, len);
      i += len;
    } else {
      AppendCStr("\\ufffd");
      ++i;
    }
  }
  AppendChar('"');
}

void JsonLine::Separator(const char* key) {
  if (!started_) {
    started_ = true;
    AppendChar('{');
    depth_ = 0;
    need_comma_[0] = false;
  }
  if (need_comma_[depth_]) AppendChar(',');
  need_comma_[depth_] = true;
  if (key != nullptr) {
    AppendEscaped(key, std::strlen(key));
    AppendChar(':');
  }
}

void JsonLine::Str(const char* key, const char* value) {
  if (value == nullptr) {
    Null(key);
    return;
  }
  StrN(key, value, std::strlen(value));
}

void JsonLine::StrN(const char* key, const char* value, size_t n) {
  Separator(key);
  AppendEscaped(value, n);
}

void JsonLine::Int(const char* key, int64_t value) {
  Separator(key);
  char num[32];
  std::snprintf(num, sizeof num, "%" PRId64, value);
  AppendCStr(num);
}

void JsonLine::Uint(const char* key, uint64_t value) {
  Separator(key);
  char num[32];
  std::snprintf(num, sizeof num, "%" PRIu64, value);
  AppendCStr(num);
}

void JsonLine::Bool(const char* key, bool value) {
  Separator(key);
  AppendCStr(value ? "true" : "false");
}

void JsonLine::Null(const char* key) {
  Separator(key);
  AppendCStr("null");
}

void JsonLine::Hex(const char* key, uint64_t value) {
  Separator(key);
  char num[32];
  std::snprintf(num, sizeof num, "\"0x%" PRIx64 "\"", value);
  AppendCStr(num);
}

void JsonLine::Seconds(const char* key, int64_t sec, long nsec) {
  Separator(key);
  char num[48];
  std::snprintf(num, sizeof num, "%" PRId64 ".%06ld", sec, nsec / 1000);
  AppendCStr(num);
}

void JsonLine::Open(const char* key, char bracket) {
  Separator(key);
  AppendChar(bracket);
  if (depth_ + 1 >= kMaxDepth) {
    ok_ = false;
    return;
  }
  need_comma_[++depth_] = false;
}

void JsonLine::Close(char bracket) {
  AppendChar(bracket);
  if (depth_ > 0) --depth_;
}

void JsonLine::Finish() {
  if (!started_) AppendChar('{');
  AppendCStr("}\n");
}

}  // namespace qpconnect::trace_preload
