// SPDX-License-Identifier: MIT
// Private to the codec: a strict first pass over JSON text before Protobuf's
// JSON parser sees it, so that every JSON error names where it is.
//
// Protobuf's parser reports syntax errors with a raw excerpt of the input and
// a caret, and no line or column, and it reads "yes", "t" or "1" in quotes as
// true. This pass parses the text with nlohmann/json's SAX parser (Debian's
// nlohmann-json3-dev, already used by the tools; RFC 8259, UTF-8 checked,
// iterative so deep nesting cannot exhaust the stack) and walks it against
// the message's schema (schema.h). Errors are kProtocol; Error::attribute is the
// field path as the codec spells it ("local.endpoint.port.active",
// "qps[1].psn"; "" at the top level) and Error::detail starts with
// "line L, column C: " (1-based; the column counts bytes). Nothing of the
// input is quoted raw: bytes outside printable ASCII are written as \xNN.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "codec/schema.h"
#include "qpconnect/result.h"

namespace qpconnect::oob::internal {

// Objects and arrays nested deeper than this are refused (the schema nests
// five levels; Protobuf's own parser stops at 100).
constexpr size_t kMaxJsonDepth = 64;

// `s` safe to print: bytes outside printable ASCII written as \xNN; at most
// `max` bytes of it, then "...".
std::string EscapedText(std::string_view s, size_t max = 160);

// 1-based line and byte column of `offset` in `text` (offset == text.size()
// is the end of the text).
struct TextPosition {
  size_t line = 1;
  size_t column = 1;
};
TextPosition PositionOf(std::string_view text, size_t offset);

// "line L, column C: " for `offset` in `text`.
std::string PositionPrefix(std::string_view text, size_t offset);

// Checks that `text` is one JSON object (RFC 8259) whose fields, where
// `type` knows them, hold values of the right JSON kind for the checks made
// here: a bool field holds true, false or null (the Protobuf JSON mapping's
// only forms), never a string such as "yes", "t" or "true", a number, an
// object or an array. Unknown fields are walked but not judged (the decoders
// ignore them). Errors: kProtocol, as described above; the detail of a
// syntax error reads "line L, column C: PATH: not valid JSON: <nlohmann's
// message>" (PATH: the member or element being read, if any).
Result<void> CheckJson(std::string_view text, const schema::Message& type);

// Byte offset in `text` of the value at `path` (the codec's spelling, e.g.
// "local.endpoint.qps[1].psn"; Protobuf's error locations use the same), or
// nullopt if the text holds no such value. REQUIRES: CheckJson(text, type)
// succeeded.
std::optional<size_t> FindJsonPath(std::string_view text, const schema::Message& type,
                                   std::string_view path);

}  // namespace qpconnect::oob::internal
