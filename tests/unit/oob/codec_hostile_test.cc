// SPDX-License-Identifier: MIT
// Hostile input to the decoders: each class the issue lists gets a distinct,
// clear error (kProtocol naming the field, kIncompatible for a newer major
// version), never a crash. Some messages are built from raw Protobuf wire bytes
// (below) because the encoder cannot produce them: a field wider than the
// core type, a newer version, both QP forms in one message.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "qpconnect/oob/codec.h"
#include "unit/oob/codec_samples.h"

namespace qpconnect::oob {
namespace {

using testing::Batch;
using testing::LenField;
using testing::SamplePlan;
using testing::SampleRc;
using testing::SampleUc;
using testing::Varint;
using testing::VarintField;
using testing::ZigZag;

// Endpoint field numbers (oob/proto/qpconnect/oob/v1/endpoint.proto).
constexpr uint32_t kVersion = 1, kMinor = 2, kTransport = 3, kPort = 5, kPath = 6, kQpCount = 10,
                   kQps = 11, kQpColumns = 12;

// version 1, RC, port 1, and the given QP columns with qp_count = count.
std::string ColumnsMessage(const std::string& columns, uint32_t count) {
  return VarintField(kVersion, 1) + VarintField(kTransport, 1) +
         LenField(kPort, VarintField(1, 1)) + VarintField(kQpCount, count) +
         LenField(kQpColumns, columns);
}
std::string PackedSint64(std::initializer_list<int64_t> values) {
  std::string s;
  for (int64_t v : values) s += Varint(ZigZag(v));
  return LenField(1, s);
}
std::string PackedPsn(std::initializer_list<uint32_t> values) {
  std::string s;
  for (uint32_t v : values) s += Varint(v);
  return LenField(2, s);
}

// Expects `r` to fail with `code`, naming `attribute`, with `detail` in its text.
template <typename T>
void ExpectError(const Result<T>& r, ErrorCode code, const std::string& attribute,
                 const std::string& detail) {
  ASSERT_FALSE(r) << "decoded, but expected: " << detail;
  EXPECT_EQ(r.error().code, code) << r.error().ToString();
  EXPECT_EQ(r.error().attribute, attribute) << r.error().ToString();
  EXPECT_NE(r.error().detail.find(detail), std::string::npos) << r.error().ToString();
  EXPECT_FALSE(r.error().operation.empty());
}

// The same endpoint must fail the same way on the encode-side check and in
// both decoders.
void ExpectRefusedEverywhere(const EndpointInfo& e, const std::string& attribute,
                             const std::string& detail) {
  ExpectError(CheckWireRanges(e), ErrorCode::kProtocol, attribute, detail);
  ExpectError(DecodeBinary(EncodeBinary(e)), ErrorCode::kProtocol, attribute, detail);
  ExpectError(DecodeJson(EncodeJson(e)), ErrorCode::kProtocol, attribute, detail);
}

TEST(CodecHostile, EmptyInputIsRefused) {
  ExpectError(DecodeBinary(""), ErrorCode::kProtocol, "", "input is empty");
  ExpectError(DecodeJson(""), ErrorCode::kProtocol, "", "input is empty");
  ExpectError(DecodeDumpJson(""), ErrorCode::kProtocol, "", "input is empty");
}

TEST(CodecHostile, EveryTruncationOfABinaryMessageIsRefused) {
  for (const EndpointInfo& e : {SampleRc(), SampleUc(), Batch(50, 0x10, true)}) {
    const std::string bytes = EncodeBinary(e);
    for (size_t n = 0; n < bytes.size(); ++n) {
      Result<EndpointInfo> r = DecodeBinary(std::string_view(bytes).substr(0, n));
      ASSERT_FALSE(r) << "a " << n << "-byte prefix of " << bytes.size() << " decoded";
      EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
    }
  }
}

TEST(CodecHostile, EveryTruncationOfAJsonMessageIsRefused) {
  const std::string text = EncodeJson(SampleUc());
  const size_t closing = text.rfind('}');
  for (size_t n = 0; n < closing; ++n) {
    Result<EndpointInfo> r = DecodeJson(std::string_view(text).substr(0, n));
    ASSERT_FALSE(r) << "a " << n << "-byte prefix decoded";
    EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  }
}

TEST(CodecHostile, BytesThatAreNotProtobufAreRefused) {
  ExpectError(DecodeBinary("hello, world"), ErrorCode::kProtocol, "", "not a Protobuf");
  ExpectError(DecodeBinary("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), ErrorCode::kProtocol,
              "", "not a Protobuf");
  ExpectError(DecodeBinary("001a:0004b2:abcdef:fe800000000000000202c9fffe010203"),
              ErrorCode::kProtocol, "", "");
  ExpectError(DecodeBinary(EncodeJson(SampleRc())), ErrorCode::kProtocol, "", "");
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 64 + 1, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    Result<EndpointInfo> r = DecodeBinary(junk);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  }
}

TEST(CodecHostile, TextThatIsNotEndpointJsonIsRefused) {
  for (const char* text : {"{", "[]", "null", "42", "not json", "{\"version\": \"x\"}",
                           "{\"qps\": 5}", "{\"version\": 1,}"}) {
    Result<EndpointInfo> r = DecodeJson(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kProtocol) << text;
  }
  ExpectError(DecodeJson(EncodeBinary(SampleRc())), ErrorCode::kProtocol, "", "not valid JSON");
  ExpectError(DecodeJson("{}"), ErrorCode::kProtocol, "version", "version is missing");
}

TEST(CodecHostile, DeeplyNestedJsonIsRefusedWithoutExhaustingTheStack) {
  const std::string deep = "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_FALSE(DecodeJson(deep));
  EXPECT_FALSE(DecodeDumpJson(deep));
}

TEST(CodecHostile, OversizedInputIsRefusedBeforeParsing) {
  const std::string big(kMaxBinaryBytes + 1, '\0');
  ExpectError(DecodeBinary(big), ErrorCode::kProtocol, "", "more than the cap");
}

TEST(CodecHostile, QpnBeyond24BitsIsRefused) {
  EndpointInfo e = Batch(5);
  e.qps[3].qpn = 0x1000000;
  ExpectRefusedEverywhere(e, "qps[3].qpn", "qps[3].qpn 0x1000000 exceeds 24 bits");
}

TEST(CodecHostile, PsnBeyond24BitsIsRefused) {
  EndpointInfo e = Batch(5);
  e.qps[3].psn = 0x1000000;
  ExpectRefusedEverywhere(e, "qps[3].psn", "qps[3].psn 0x1000000 exceeds 24 bits");
}

TEST(CodecHostile, QpnDeltasThatLeaveTheRangeAreRefused) {
  ExpectError(DecodeBinary(ColumnsMessage(PackedSint64({5, -6}) + PackedPsn({0, 0}), 2)),
              ErrorCode::kProtocol, "qps[1].qpn", "qpn_delta[1] is -6");
  ExpectError(DecodeBinary(ColumnsMessage(PackedSint64({5, INT64_MAX}) + PackedPsn({0, 0}), 2)),
              ErrorCode::kProtocol, "qps[1].qpn", "out of range");
  ExpectError(DecodeBinary(ColumnsMessage(PackedSint64({INT64_MIN}) + PackedPsn({0}), 1)),
              ErrorCode::kProtocol, "qps[0].qpn", "out of range");
  ExpectError(DecodeBinary(ColumnsMessage(PackedSint64({0xffffff, 1}) + PackedPsn({0, 0}), 2)),
              ErrorCode::kProtocol, "qps[1].qpn", "0x1000000 exceeds 24 bits");
  // The hand-built message itself is fine.
  Result<EndpointInfo> ok =
      DecodeBinary(ColumnsMessage(PackedSint64({5, 1}) + PackedPsn({7, 8}), 2));
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(ok->qps[1].qpn, 6u);
  EXPECT_EQ(ok->qps[1].psn, 8u);
}

TEST(CodecHostile, MtuEnumOutOfRangeIsRefused) {
  EndpointInfo e = SampleRc();
  e.path.path_mtu = static_cast<Mtu>(9);
  ExpectRefusedEverywhere(e, "path.path_mtu", "path.path_mtu 9 is not a valid MTU");
  // Wider than the core enum, and negative (proto3 enums are int32).
  const std::string bytes = EncodeBinary(SampleRc());
  ExpectError(DecodeBinary(bytes + LenField(kPort, VarintField(8, 300))), ErrorCode::kProtocol,
              "port.active_mtu", "port.active_mtu 300 is not a valid MTU");
  ExpectError(DecodeBinary(bytes + LenField(kPath, VarintField(1, static_cast<uint64_t>(-1)))),
              ErrorCode::kProtocol, "path.path_mtu", "path.path_mtu -1 is not a valid MTU");
}

TEST(CodecHostile, OtherEnumsOutOfRangeAreRefused) {
  EndpointInfo e = SampleRc();
  e.transport = static_cast<Transport>(0);
  ExpectRefusedEverywhere(e, "transport", "transport 0 is not a valid transport");
  e = SampleRc();
  e.port.link_layer = static_cast<LinkLayer>(3);
  ExpectRefusedEverywhere(e, "port.link_layer", "is not a valid link layer");
  e = SampleUc();
  e.gid_table[2].type = static_cast<GidType>(4);
  ExpectRefusedEverywhere(e, "gid_table[2].type", "is not a valid GID type");
  e = SampleUc();
  e.path.sgid->family = static_cast<GidFamily>(3);
  ExpectRefusedEverywhere(e, "path.sgid.family", "is not a valid GID family");
}

TEST(CodecHostile, PortAndPathRangesAreChecked) {
  EndpointInfo e = SampleRc();
  e.port.port_num = 0;
  ExpectRefusedEverywhere(e, "port.port_num", "port.port_num 0 is out of range 1..255");
  ExpectError(DecodeBinary(EncodeBinary(SampleRc()) + LenField(kPort, VarintField(1, 256))),
              ErrorCode::kProtocol, "port.port_num", "port.port_num 256 is out of range 1..255");
  ExpectError(DecodeBinary(EncodeBinary(SampleRc()) + LenField(kPort, VarintField(4, 0x10000))),
              ErrorCode::kProtocol, "port.lid", "port.lid 65536 is out of range 0..65535");
  e = SampleRc();
  e.port.lmc = 8;
  ExpectRefusedEverywhere(e, "port.lmc", "port.lmc 8 is out of range 0..7");
  e = SampleRc();
  e.path.sl = 16;
  ExpectRefusedEverywhere(e, "path.sl", "path.sl 16 is out of range 0..15");
  e = SampleRc();
  e.path.flow_label = 1 << 20;
  ExpectRefusedEverywhere(e, "path.flow_label", "path.flow_label 0x100000 exceeds 20 bits");
  e = SampleRc();
  e.path.src_path_bits = 128;
  ExpectRefusedEverywhere(e, "path.src_path_bits", "is out of range 0..127");
  ExpectError(DecodeBinary(EncodeBinary(SampleRc()) + LenField(kPath, VarintField(6, 256))),
              ErrorCode::kProtocol, "path.hop_limit", "path.hop_limit 256 is out of range 0..255");
}

TEST(CodecHostile, EmptyQpListIsRefused) {
  EndpointInfo e = SampleRc();
  e.qps.clear();
  ExpectRefusedEverywhere(e, "qps", "qps is empty");
}

TEST(CodecHostile, QpCountMismatchIsRefused) {
  const std::string bytes = EncodeBinary(Batch(3));
  ExpectError(DecodeBinary(bytes + VarintField(kQpCount, 5)), ErrorCode::kProtocol, "qp_count",
              "qp_count 5 does not match the 3 QPs present");
  ExpectError(DecodeBinary(bytes + LenField(kQpColumns, PackedPsn({1}))), ErrorCode::kProtocol,
              "qp_columns", "has 3 qpn_delta but 4 psn entries");
  ExpectError(DecodeBinary(bytes + LenField(kQps, VarintField(1, 1))), ErrorCode::kProtocol, "qps",
              "qps and qp_columns are both present");
  std::string json = EncodeJson(Batch(3));
  json.replace(json.find("\"qp_count\": 3"), 13, "\"qp_count\": 2");
  ExpectError(DecodeJson(json), ErrorCode::kProtocol, "qp_count",
              "qp_count 2 does not match the 3 QPs present");
}

TEST(CodecHostile, MrIndexesOutOfOrderAreRefused) {
  const std::string mr = LenField(3, VarintField(1, 1) + VarintField(3, 7));
  const std::string qps = PackedSint64({1, 1}) + PackedPsn({0, 0});
  ASSERT_TRUE(DecodeBinary(ColumnsMessage(qps + mr, 2)));
  ExpectError(DecodeBinary(ColumnsMessage(qps + mr + mr, 2)), ErrorCode::kProtocol,
              "qp_columns.mrs[1].qp_index", "is not above the previous");
  ExpectError(DecodeBinary(ColumnsMessage(qps + LenField(3, VarintField(1, 2)), 2)),
              ErrorCode::kProtocol, "qp_columns.mrs[0].qp_index", "below the QP count (2)");
}

TEST(CodecHostile, NewerMajorVersionIsIncompatible) {
  ExpectError(DecodeBinary(EncodeBinary(SampleRc()) + VarintField(kVersion, 7)),
              ErrorCode::kIncompatible, "version", "version 7 is newer than supported 1");
  std::string json = EncodeJson(SampleRc());
  json.replace(json.find("\"version\": 1"), 12, "\"version\": 7");
  ExpectError(DecodeJson(json), ErrorCode::kIncompatible, "version",
              "version 7 is newer than supported 1");
}

TEST(CodecHostile, MissingVersionIsRefused) {
  ExpectError(DecodeBinary(EncodeBinary(SampleRc()) + VarintField(kVersion, 0)),
              ErrorCode::kProtocol, "version", "version is missing");
}

TEST(CodecHostile, NewerMinorVersionAndUnknownFieldsAreAccepted) {
  const std::string future =
      VarintField(kMinor, 9) + VarintField(99, 12345) + LenField(100, "a field from the future") +
      LenField(kPort, VarintField(50, 1)) + LenField(kQpColumns, VarintField(20, 3));
  Result<EndpointInfo> r = DecodeBinary(EncodeBinary(SampleUc()) + future);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(*r, SampleUc());

  std::string json = EncodeJson(SampleUc());
  json.insert(json.find('{') + 1, "\"minor_version\": 9, \"future\": {\"x\": [1, 2]},");
  Result<EndpointInfo> j = DecodeJson(json);
  ASSERT_TRUE(j) << j.error().ToString();
  EXPECT_EQ(*j, SampleUc());
}

TEST(CodecHostile, OversizeStringsAreRefused) {
  EndpointInfo e = SampleRc();
  e.identity.host = std::string(256, 'h');
  ExpectRefusedEverywhere(e, "identity.host",
                          "identity.host is 256 bytes long, more than the cap of 255");
  e = SampleRc();
  e.identity.device = std::string(65, 'd');
  ExpectRefusedEverywhere(e, "identity.device", "more than the cap of 64");
  e = SampleUc();
  e.gid_table[1].netdev = std::string(129, 'n');
  ExpectRefusedEverywhere(e, "gid_table[1].netdev", "more than the cap of 128");
}

TEST(CodecHostile, ControlCharactersAndBadUtf8AreRefused) {
  EndpointInfo e = SampleRc();
  e.identity.host = "a\x1b[31mred";
  ExpectRefusedEverywhere(e, "identity.host", "contains control character 0x1b at byte 1");
  e.identity.host = "bad\xff";
  ExpectError(CheckWireRanges(e), ErrorCode::kProtocol, "identity.host", "not valid UTF-8");
  // Protobuf itself refuses invalid UTF-8 in a proto3 string.
  ASSERT_FALSE(DecodeBinary(EncodeBinary(e)));
  e.identity.host = "\xed\xa0\x80";  // a UTF-16 surrogate
  ExpectError(CheckWireRanges(e), ErrorCode::kProtocol, "identity.host", "not valid UTF-8");
}

TEST(CodecHostile, OversizeCountsAreRefused) {
  const EndpointInfo too_many = Batch(kMaxWireQps + 1);
  ExpectError(CheckWireRanges(too_many), ErrorCode::kProtocol, "qps", "more than the cap");
  ExpectError(DecodeBinary(EncodeBinary(too_many)), ErrorCode::kProtocol, "qp_columns.qpn_delta",
              "has 1048577 entries, more than the cap of 1048576");
  EXPECT_LT(EncodeBinary(too_many).size(), kMaxBinaryBytes);

  EndpointInfo gids = SampleUc();
  gids.gid_table.resize(4097, gids.gid_table[0]);
  ExpectRefusedEverywhere(gids, "gid_table", "has 4097 entries, more than the cap of 4096");
}

TEST(CodecHostile, GidsOfTheWrongShapeAreRefused) {
  std::string json = EncodeJson(SampleRc());
  auto with_sgid = [&](const std::string& fields) {
    std::string j = json;
    const size_t at = j.find("\"gid_text\": \"fe80::202:c9ff:fe01:203\"");
    j.replace(at, std::string("\"gid_text\": \"fe80::202:c9ff:fe01:203\"").size(), fields);
    return j;
  };
  // 15 bytes, base64.
  ExpectError(DecodeJson(with_sgid("\"gid\": \"/oAAAAAAAAACAsn//gEC\"")), ErrorCode::kProtocol,
              "path.sgid.gid", "path.sgid.gid is 15 bytes long, not 16");
  ExpectError(DecodeJson(with_sgid("\"gid\": \"/oAAAAAAAAACAsn//gECAw==\", \"gid_text\": \"::1\"")),
              ErrorCode::kProtocol, "path.sgid", "has both gid and gid_text");
  ExpectError(DecodeJson(with_sgid("\"index\": 0")), ErrorCode::kProtocol, "path.sgid",
              "has neither gid");
  ExpectError(DecodeJson(with_sgid("\"gid_text\": \"fe80::zz\"")), ErrorCode::kProtocol,
              "path.sgid.gid_text", "\"fe80::zz\" is not an IPv6 address");
  ExpectError(DecodeJson(with_sgid("\"gid_text\": \"" + std::string(46, '1') + "\"")),
              ErrorCode::kProtocol, "path.sgid.gid_text", "more than the cap of 45");
  // The 16-byte base64 form, as generic Protobuf tools write it, is accepted.
  Result<EndpointInfo> b64 = DecodeJson(with_sgid("\"gid\": \"/oAAAAAAAAACAsn//gECAw==\""));
  ASSERT_TRUE(b64) << b64.error().ToString();
  EXPECT_EQ(*b64, SampleRc());
}

TEST(CodecHostile, DumpErrorsNameTheirSide) {
  Dump dump;
  dump.local.endpoint = SampleRc();
  dump.local.plan = SamplePlan();
  dump.local.plan->qps[0].retry_cnt = 8;
  ExpectError(DecodeDumpJson(EncodeDumpJson(dump)), ErrorCode::kProtocol,
              "local.plan.qps[0].retry_cnt", "local.plan.qps[0].retry_cnt 8 is out of range 0..7");

  dump.local.plan = SamplePlan();
  dump.local.plan->qps[0].rq_psn = 0x1000000;
  ExpectError(DecodeDumpJson(EncodeDumpJson(dump)), ErrorCode::kProtocol,
              "local.plan.qps[0].rq_psn", "0x1000000 exceeds 24 bits");

  dump.local.plan = SamplePlan();
  dump.remote = Batch(2);
  dump.remote->qps[1].psn = 0x1000000;
  ExpectError(DecodeDumpJson(EncodeDumpJson(dump)), ErrorCode::kProtocol, "remote.qps[1].psn",
              "remote.qps[1].psn 0x1000000 exceeds 24 bits");

  dump.remote.reset();
  dump.local.endpoint.qps.clear();
  ExpectError(DecodeDumpJson(EncodeDumpJson(dump)), ErrorCode::kProtocol, "local.endpoint.qps",
              "is empty");

  ExpectError(DecodeDumpJson("{\"remote\": {}}"), ErrorCode::kProtocol, "", "local is missing");
  ExpectError(DecodeDumpJson("{\"version\": 1, \"local\": {}}"), ErrorCode::kProtocol, "",
              "local.endpoint is missing");
  ExpectError(DecodeDumpJson("{\"version\": 2, \"local\": {}}"), ErrorCode::kIncompatible,
              "version", "version 2 is newer than supported 1");
}

}  // namespace
}  // namespace qpconnect::oob
