// SPDX-License-Identifier: MIT
// JSON input errors (issue 14): every error about the text names its line,
// column and field path, quotes nothing raw, and booleans are strict.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codec_samples.h"
#include "qpconnect/oob/codec.h"

namespace qpconnect::oob {
namespace {

using testing::SampleRc;

// `text` with the first `from` replaced by `to`. REQUIRES: `from` occurs.
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Every byte of `s` is printable ASCII.
bool Printable(const std::string& s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return false;
  }
  return true;
}

// "line L, column C: " of byte `offset` of `text`, counted independently of
// the codec: lines split at '\n', columns in bytes from 1.
std::string Where(const std::string& text, size_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
}

template <typename T>
Error ErrorOf(const Result<T>& r) {
  EXPECT_FALSE(r);
  return r ? Error{} : r.error();
}

Dump SampleDump() {
  Dump d;
  d.local.endpoint = SampleRc();
  ConnectionPlan plan;
  plan.transport = Transport::kRc;
  plan.qps.resize(1);
  plan.qps[0].qp_num = d.local.endpoint.qps[0].qpn;
  plan.qps[0].ah.is_global = true;
  d.local.plan = plan;
  d.remote = SampleRc();
  return d;
}

TEST(CodecJsonErrors, SyntaxErrorsNameLineColumnAndPath) {
  // Line 3 ends a value with two commas.
  const std::string text = "{\n \"version\": 1,\n \"port\": {\"port_num\": 1,, \"lid\": 2}\n}\n";
  const Error e = ErrorOf(DecodeJson(text));
  EXPECT_EQ(e.code, ErrorCode::kProtocol);
  EXPECT_EQ(e.attribute, "port");
  EXPECT_EQ(e.detail.rfind("line 3, column 25: port: not valid JSON: ", 0), 0u) << e.detail;
  EXPECT_TRUE(Printable(e.detail)) << e.detail;
}

TEST(CodecJsonErrors, TruncatedInputPointsAtItsEnd) {
  const std::string text = "{\"version\": 1, \"port\": {\"port_num\": 1";
  const Error e = ErrorOf(DecodeDumpJson(text));
  // The value of port_num is complete: the parser is in "port" when the text ends.
  EXPECT_EQ(e.detail.rfind("line 1, column 38: port: not valid JSON: ", 0), 0u) << e.detail;
  EXPECT_NE(e.detail.find("unexpected end of input"), std::string::npos) << e.detail;
}

TEST(CodecJsonErrors, InvalidUtf8IsEscapedNotQuotedRaw) {
  // Today's Protobuf message: "Closing quote expected in string.??^" and the like.
  const std::string text = "{\"version\": 1,\n \"identity\": {\"host\": \"a\xc3";
  const Error e = ErrorOf(DecodeJson(text));
  EXPECT_TRUE(Printable(e.detail)) << e.detail;
  // The bad sequence ends with the text (column 26); the string is identity.host.
  EXPECT_EQ(e.detail.rfind("line 2, column 26: identity.host: not valid JSON: ", 0), 0u)
      << e.detail;
  EXPECT_NE(e.detail.find("\\xc3"), std::string::npos) << e.detail;
  EXPECT_EQ(e.detail.find("?^"), std::string::npos) << e.detail;
}

TEST(CodecJsonErrors, ADocumentThatIsNotAnObjectSaysWhatItIs) {
  // Today's Protobuf message: ": Root element must be a message."
  for (const auto& [text, what] : std::vector<std::pair<std::string, std::string>>{
           {"[1, 2]", "the document is an array, not an object"},
           {"\n  42", "the document is a number, not an object"},
           {"\"x\"", "the document is the string \"x\", not an object"}}) {
    const Error e = ErrorOf(DecodeDumpJson(text));
    EXPECT_NE(e.detail.find(what), std::string::npos) << e.detail;
    EXPECT_EQ(e.detail.rfind("line ", 0), 0u) << e.detail;
    EXPECT_EQ(e.detail.find("Root element"), std::string::npos) << e.detail;
  }
  EXPECT_EQ(ErrorOf(DecodeJson("\n  42")).detail.rfind("line 2, column 3: ", 0), 0u);
}

TEST(CodecJsonErrors, BooleansAcceptOnlyTrueFalseAndNull) {
  const std::string json = EncodeJson(SampleRc());
  ASSERT_NE(json.find("\"active\": true"), std::string::npos) << json;
  for (const char* bad :
       {"\"yes\"", "\"t\"", "\"true\"", "\"1\"", "1", "0", "{}", "[]", "[true]"}) {
    const Error e =
        ErrorOf(DecodeJson(Replace(json, "\"active\": true", "\"active\": " + std::string(bad))));
    EXPECT_EQ(e.code, ErrorCode::kProtocol) << bad;
    EXPECT_EQ(e.attribute, "port.active") << bad << ": " << e.detail;
    EXPECT_NE(e.detail.find("port.active must be true or false, not "), std::string::npos)
        << bad << ": " << e.detail;
    EXPECT_EQ(e.detail.rfind("line ", 0), 0u) << e.detail;
  }
  EXPECT_TRUE(DecodeJson(Replace(json, "\"active\": true", "\"active\": false")));
  // The Protobuf JSON mapping's null is the field's default.
  const Result<EndpointInfo> null =
      DecodeJson(Replace(json, "\"active\": true", "\"active\": null"));
  ASSERT_TRUE(null) << null.error().ToString();
  EXPECT_FALSE(null->port.active);
}

TEST(CodecJsonErrors, BooleansAreStrictUnderTheirJsonNamesAndInDumps) {
  const std::string json = EncodeJsonLine(SampleRc());
  const std::string camel_text = Replace(json, "\"port\":{", "\"port\":{\"grhRequired\": \"t\", ");
  const Error camel = ErrorOf(DecodeJson(camel_text));
  EXPECT_EQ(camel.attribute, "port.grh_required") << camel.detail;
  EXPECT_EQ(camel.detail, Where(camel_text, camel_text.find("\"t\"")) +
                              "port.grh_required must be true or false, not the string \"t\"");

  const std::string dump = EncodeDumpJson(SampleDump());
  ASSERT_NE(dump.find("\"is_global\": true"), std::string::npos) << dump;
  const Error plan =
      ErrorOf(DecodeDumpJson(Replace(dump, "\"is_global\": true", "\"is_global\": \"yes\"")));
  EXPECT_EQ(plan.attribute, "local.plan.qps[0].ah.is_global") << plan.detail;
  const Error active =
      ErrorOf(DecodeDumpJson(Replace(dump, "\"active\": true", "\"active\": \"yes\"")));
  EXPECT_EQ(active.attribute, "local.endpoint.port.active") << active.detail;
  // A dump-shaped plain endpoint (no "local") is checked as an endpoint.
  const Error plain = ErrorOf(
      DecodeDumpJson(Replace(EncodeJson(SampleRc()), "\"active\": true", "\"active\": \"t\"")));
  EXPECT_EQ(plain.attribute, "port.active") << plain.detail;
}

TEST(CodecJsonErrors, UnknownFieldsAreNotJudged) {
  const std::string json = EncodeJsonLine(SampleRc());
  EXPECT_TRUE(DecodeJson(Replace(json, "{", "{\"future\": {\"active\": \"yes\"}, ")));
}

TEST(CodecJsonErrors, ValueErrorsAreLocatedToo) {
  const std::string json = EncodeJson(SampleRc());
  // Protobuf's own refusals: a string for a number.
  const std::string psn = "\"psn\": " + std::to_string(0xabcdef);
  const std::string typed = Replace(json, psn, "\"psn\": \"x\"");
  const Error t = ErrorOf(DecodeJson(typed));
  EXPECT_EQ(t.attribute, "qps[0].psn") << t.detail;
  const std::string where = Where(typed, typed.find("\"x\""));
  EXPECT_EQ(t.detail.rfind(where + "qps[0].psn: ", 0), 0u) << t.detail;
  EXPECT_NE(t.detail.find("invalid value \"x\""), std::string::npos) << t.detail;
  // The codec's range checks name the same place.
  const Error r = ErrorOf(DecodeJson(Replace(json, psn, "\"psn\": 16777216")));
  EXPECT_EQ(r.detail, where + "qps[0].psn 0x1000000 exceeds 24 bits") << r.detail;
}

TEST(CodecJsonErrors, DeepNestingIsRefusedWithItsPlace) {
  const std::string deep = "{\"x\": " + std::string(100, '[') + std::string(100, ']') + "}";
  const Error e = ErrorOf(DecodeJson(deep));
  EXPECT_NE(e.detail.find("nested more than 64 levels deep"), std::string::npos) << e.detail;
  EXPECT_EQ(e.detail.rfind("line 1, column 70: ", 0), 0u) << e.detail;
}

TEST(CodecJsonErrors, MutatedDumpsFailCleanlyWithPrintableErrors) {
  const std::string dump = EncodeDumpJson(SampleDump());
  std::mt19937 rng(14);
  const std::string alphabet = "{}[]:,\"\\ \n0123456789tfnuley-\xc3\xff\x01";
  for (int i = 0; i < 3000; ++i) {
    std::string text = dump;
    for (int k = 0, n = static_cast<int>(rng() % 4) + 1; k < n; ++k) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.erase(at, rng() % 8 + 1);
          break;
        default:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
      if (text.empty()) text = "{";
    }
    const Result<Dump> r = DecodeDumpJson(text);
    if (r) continue;
    EXPECT_TRUE(r.error().code == ErrorCode::kProtocol ||
                r.error().code == ErrorCode::kIncompatible)
        << r.error().ToString();
    EXPECT_TRUE(Printable(r.error().detail)) << r.error().detail;
  }
}

}  // namespace
}  // namespace qpconnect::oob
