// SPDX-License-Identifier: MIT
// The one JSON vocabulary (issue 14, docs/json.md): the codec writes "rc",
// 1024 and GUID text; it reads that and the older Protobuf forms alike, and
// refuses a value that is neither, naming the field, line and column.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "codec_samples.h"
#include "qpconnect/oob/codec.h"

namespace qpconnect::oob {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(CodecVocabulary, WritesShortNamesMtuBytesAndGuidText) {
  const std::string json = EncodeJson(testing::ExampleEndpoint());
  EXPECT_NE(json.find("\"transport\": \"rc\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"link_layer\": \"ethernet\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"path_mtu\": 1024"), std::string::npos) << json;
  EXPECT_NE(json.find("\"type\": \"roce-v2\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"family\": \"ipv4\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"node_guid\": \"0c42:a103:00b1:c2d3\""), std::string::npos) << json;
  for (const char* proto : {"TRANSPORT_", "LINK_LAYER_", "MTU_", "GID_TYPE_", "GID_FAMILY_"}) {
    EXPECT_EQ(json.find(proto), std::string::npos) << proto << " in\n" << json;
  }
  const std::string line = EncodeJsonLine(testing::ExampleEndpoint());
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("\"transport\":\"rc\""), std::string::npos) << line;
}

TEST(CodecVocabulary, ReadsTheOlderProtobufFormsAsBefore) {
  // The documented example as the encoder wrote it before (proto enum names,
  // MTU enums, the GUID as a decimal string).
  const std::string older =
      ReadFile(std::string(QPC_TESTDATA_DIR) + "/oob/example_endpoint_proto_names.json");
  ASSERT_NE(older.find("TRANSPORT_RC"), std::string::npos);
  ASSERT_NE(older.find("MTU_1024"), std::string::npos);
  auto decoded = DecodeJson(older);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(*decoded, testing::ExampleEndpoint());
  auto current = DecodeJson(EncodeJson(testing::ExampleEndpoint()));
  ASSERT_TRUE(current) << current.error().ToString();
  EXPECT_EQ(*current, *decoded);
}

TEST(CodecVocabulary, EveryMtuSpellingReadsTheSame) {
  const std::string json = EncodeJson(testing::ExampleEndpoint());
  for (const char* spelling : {"1024", "\"1024\"", "\"MTU_1024\"", "3"}) {
    auto d =
        DecodeJson(Replace(json, "\"path_mtu\": 1024", std::string("\"path_mtu\": ") + spelling));
    ASSERT_TRUE(d) << spelling << ": " << d.error().ToString();
    EXPECT_EQ(d->path.path_mtu, Mtu::k1024) << spelling;
  }
}

TEST(CodecVocabulary, EveryEnumSpellingReadsTheSame) {
  const std::string json = EncodeJson(testing::ExampleEndpoint());
  for (const char* spelling : {"\"uc\"", "\"TRANSPORT_UC\"", "2"}) {
    auto d = DecodeJson(
        Replace(json, "\"transport\": \"rc\"", std::string("\"transport\": ") + spelling));
    ASSERT_TRUE(d) << spelling << ": " << d.error().ToString();
    EXPECT_EQ(d->transport, Transport::kUc) << spelling;
  }
  auto v1 = DecodeJson(Replace(json, "\"roce-v2\"", "\"roce-v1\""));
  ASSERT_TRUE(v1) << v1.error().ToString();
  EXPECT_EQ(v1->path.sgid->type, GidType::kRoceV1);
}

TEST(CodecVocabulary, GuidAsTextOrDecimalReadsTheSame) {
  const std::string json = EncodeJson(testing::ExampleEndpoint());
  auto text = DecodeJson(json);
  auto decimal = DecodeJson(Replace(json, "\"0c42:a103:00b1:c2d3\"",
                                    "\"" + std::to_string(0x0c42a10300b1c2d3ULL) + "\""));
  ASSERT_TRUE(text) << text.error().ToString();
  ASSERT_TRUE(decimal) << decimal.error().ToString();
  EXPECT_EQ(text->identity.node_guid, 0x0c42a10300b1c2d3ULL);
  EXPECT_EQ(decimal->identity.node_guid, 0x0c42a10300b1c2d3ULL);
}

TEST(CodecVocabulary, RefusesAValueOfNeitherVocabularyNamingFieldPlaceAndChoices) {
  const std::string json = EncodeJson(testing::ExampleEndpoint());
  auto mtu = DecodeJson(Replace(json, "\"path_mtu\": 1024", "\"path_mtu\": 1000"));
  ASSERT_FALSE(mtu);
  EXPECT_EQ(mtu.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(mtu.error().attribute, "path.path_mtu");
  EXPECT_NE(mtu.error().detail.find("line "), std::string::npos) << mtu.error().detail;
  EXPECT_NE(mtu.error().detail.find("256, 512, 1024, 2048, 4096"), std::string::npos)
      << mtu.error().detail;

  auto transport = DecodeJson(Replace(json, "\"transport\": \"rc\"", "\"transport\": \"rdma\""));
  ASSERT_FALSE(transport);
  EXPECT_EQ(transport.error().attribute, "transport");
  EXPECT_NE(transport.error().detail.find("line 3, column 15"), std::string::npos)
      << transport.error().detail;
  EXPECT_NE(transport.error().detail.find("\"rc\", \"uc\", \"ud\""), std::string::npos)
      << transport.error().detail;

  auto guid = DecodeJson(Replace(json, "\"0c42:a103:00b1:c2d3\"", "\"0c42:a103:00b1:zzzz\""));
  ASSERT_FALSE(guid);
  EXPECT_EQ(guid.error().attribute, "identity.node_guid");
  EXPECT_NE(guid.error().detail.find("is not a GUID"), std::string::npos) << guid.error().detail;
}

TEST(CodecVocabulary, DumpsUseItToo) {
  Dump d;
  d.local.endpoint = testing::ExampleEndpoint();
  d.remote = testing::ExampleEndpoint();
  const std::string json = EncodeDumpJson(d);
  EXPECT_EQ(json.find("TRANSPORT_"), std::string::npos) << json;
  EXPECT_NE(json.find("\"transport\": \"rc\""), std::string::npos) << json;
  auto back = DecodeDumpJson(json);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->local.endpoint, d.local.endpoint);
}

}  // namespace
}  // namespace qpconnect::oob
