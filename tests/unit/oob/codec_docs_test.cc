// SPDX-License-Identifier: MIT
// Golden files: the annotated example of docs/wire-format.md, its copy in
// tests/testdata/oob/example_endpoint.json, and the fuzz seed corpus in
// oob/fuzz/corpus are each exactly what the encoder writes today, and decode.
// So the documentation cannot drift from the code, and a change of the
// encoding shows up here.
//
// After a deliberate change of the encoding, regenerate the corpus and the
// testdata copy with
//   QPC_REGENERATE_GOLDEN=1 codec_test --gtest_filter='CodecGolden.*'
// then paste tests/testdata/oob/example_endpoint.json (and the hex the test
// prints) into docs/wire-format.md.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "qpconnect/oob/codec.h"
#include "unit/oob/codec_samples.h"

namespace qpconnect::oob {
namespace {

const std::string kSourceDir = QPC_SOURCE_DIR;

bool Regenerate() { return std::getenv("QPC_REGENERATE_GOLDEN") != nullptr; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  ASSERT_TRUE(out.good()) << path;
}

// The fenced block that follows the line "<!-- example: NAME -->" in the doc.
std::string DocBlock(const std::string& doc, const std::string& name) {
  const std::string marker = "<!-- example: " + name + " -->\n";
  const size_t at = doc.find(marker);
  if (at == std::string::npos) return {};
  const size_t fence = doc.find('\n', at + marker.size());  // end of the ``` line
  const size_t end = doc.find("\n```", fence);
  if (fence == std::string::npos || end == std::string::npos) return {};
  return doc.substr(fence + 1, end - fence);
}

std::string ToHex(const std::string& bytes) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(bytes[i]));
    out += buf;
    out += (i % 16 == 15 || i + 1 == bytes.size()) ? '\n' : ' ';
  }
  return out;
}

std::string FromHex(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string byte;
  while (in >> byte) out += static_cast<char>(std::stoi(byte, nullptr, 16));
  return out;
}

TEST(CodecGolden, DocumentedJsonExampleIsWhatTheEncoderWrites) {
  const std::string doc = ReadFile(kSourceDir + "/docs/wire-format.md");
  const std::string testdata_path = std::string(QPC_TESTDATA_DIR) + "/oob/example_endpoint.json";
  const std::string expected = EncodeJson(testing::ExampleEndpoint());
  if (Regenerate()) WriteFile(testdata_path, expected);

  const std::string block = DocBlock(doc, "endpoint-json");
  ASSERT_FALSE(block.empty()) << "docs/wire-format.md has no `<!-- example: endpoint-json -->`";
  EXPECT_EQ(block, ReadFile(testdata_path)) << "the doc and its testdata copy differ";
  EXPECT_EQ(block, expected) << "the doc's example is not what EncodeJson writes";

  Result<EndpointInfo> decoded = DecodeJson(block);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(*decoded, testing::ExampleEndpoint());
  EXPECT_EQ(decoded->transport, Transport::kRc);
  EXPECT_EQ(GidToString(decoded->path.sgid->gid), "::ffff:192.0.2.10");
  ASSERT_EQ(decoded->qps.size(), 2u);
  EXPECT_EQ(decoded->qps[0].qpn, 0x1a4u);
  EXPECT_EQ(decoded->qps[0].psn, 0x3f2c11u);
}

TEST(CodecGolden, DocumentedBinaryExampleIsWhatTheEncoderWrites) {
  const std::string doc = ReadFile(kSourceDir + "/docs/wire-format.md");
  const std::string bytes = EncodeBinary(testing::ExampleEndpoint());
  if (Regenerate())
    std::printf("endpoint-binary (%zu bytes):\n%s", bytes.size(), ToHex(bytes).c_str());
  const std::string block = DocBlock(doc, "endpoint-binary");
  ASSERT_FALSE(block.empty()) << "docs/wire-format.md has no `<!-- example: endpoint-binary -->`";
  EXPECT_EQ(block, ToHex(bytes));
  Result<EndpointInfo> decoded = DecodeBinary(FromHex(block));
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(*decoded, testing::ExampleEndpoint());
}

// The fuzz seeds: small valid inputs of each decoder.
std::vector<std::pair<std::string, std::string>> Seeds() {
  Dump dump;
  dump.local.endpoint = testing::SampleRc();
  dump.local.plan = testing::SamplePlan();
  dump.remote = testing::SampleUc();
  Dump no_plan;
  no_plan.local.endpoint = testing::SampleUd();
  return {
      {"rc.bin", EncodeBinary(testing::SampleRc())},
      {"uc-roce-mr.bin", EncodeBinary(testing::SampleUc())},
      {"ud.bin", EncodeBinary(testing::SampleUd())},
      {"batch16-mr.bin", EncodeBinary(testing::Batch(16, 0x40, true))},
      {"example.bin", EncodeBinary(testing::ExampleEndpoint())},
      {"rc.json", EncodeJson(testing::SampleRc())},
      {"uc-line.json", EncodeJsonLine(testing::SampleUc())},
      {"dump.json", EncodeDumpJson(dump)},
      {"dump-no-plan.json", EncodeDumpJson(no_plan)},
  };
}

TEST(CodecGolden, FuzzSeedCorpusIsCurrent) {
  const std::string dir = kSourceDir + "/oob/fuzz/corpus/";
  for (const auto& [name, data] : Seeds()) {
    if (Regenerate()) WriteFile(dir + name, data);
    EXPECT_EQ(ReadFile(dir + name), data) << dir + name << " is stale (see the file comment)";
    const bool json = name.ends_with(".json");
    const bool ok =
        json ? static_cast<bool>(DecodeDumpJson(data)) : static_cast<bool>(DecodeBinary(data));
    EXPECT_TRUE(ok) << name;
  }
}

}  // namespace
}  // namespace qpconnect::oob
