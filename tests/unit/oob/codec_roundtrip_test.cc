// SPDX-License-Identifier: MIT
// Round trips of the codec: binary and JSON for each transport, batches of 1
// and 10,000 QPs (with the per-QP size bound the wire format promises), dumps.
#include <gtest/gtest.h>

#include <cstdio>

#include "qpconnect/oob/codec.h"
#include "unit/oob/codec_samples.h"

namespace qpconnect::oob {
namespace {

using testing::Batch;
using testing::LenField;
using testing::SamplePlan;
using testing::SampleRc;
using testing::SampleUc;
using testing::SampleUd;
using testing::VarintField;

void ExpectRoundTrips(const EndpointInfo& info) {
  ASSERT_TRUE(CheckWireRanges(info)) << CheckWireRanges(info).error().ToString();

  Result<EndpointInfo> binary = DecodeBinary(EncodeBinary(info));
  ASSERT_TRUE(binary) << binary.error().ToString();
  EXPECT_EQ(*binary, info);

  const std::string json = EncodeJson(info);
  Result<EndpointInfo> from_json = DecodeJson(json);
  ASSERT_TRUE(from_json) << from_json.error().ToString() << "\n" << json;
  EXPECT_EQ(*from_json, info);

  const std::string line = EncodeJsonLine(info);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  Result<EndpointInfo> from_line = DecodeJson(line);
  ASSERT_TRUE(from_line) << from_line.error().ToString();
  EXPECT_EQ(*from_line, info);
}

TEST(CodecRoundTrip, RcOverInfiniBand) { ExpectRoundTrips(SampleRc()); }
TEST(CodecRoundTrip, UcOverRoceWithMrs) { ExpectRoundTrips(SampleUc()); }
TEST(CodecRoundTrip, UdWithQkeyOverride) { ExpectRoundTrips(SampleUd()); }

TEST(CodecRoundTrip, ExtremeValuesSurvive) {
  EndpointInfo e = SampleUd();
  e.identity.node_guid = ~0ULL;
  e.identity.host = std::string(255, 'h');
  e.identity.device = "d\xc3\xa9v";  // UTF-8 is fine
  e.port.port_num = 255;
  e.port.lid = 0xffff;
  e.port.sm_lid = 0xffff;
  e.port.lmc = 7;
  e.port.subnet_prefix = ~0ULL;
  e.path.sl = 15;
  e.path.flow_label = 0xfffff;
  e.path.path_from_sa = true;
  e.path.gid_choice = GidChoice::kPinned;
  e.netdevs = {{"veth0", {0x02, 0x00, 0x0a, 0x63, 0x00, 0xff}, 4094, ~0u},
               {"eth1.7", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0, 0}};
  e.path.traffic_class = 255;
  e.path.hop_limit = 0;  // 0 must not become the core default (1)
  e.path.src_path_bits = 127;
  e.path.sgid->index = 0xffff;
  e.keys = {0xffff, 0xffff, ~0u, 0u};
  e.rd_atomic = {255, 255, ~0u, ~0u};
  e.qps = {{0, 0, MrDescriptor{~0ULL, ~0u, ~0ULL}},
           {kQpnMask, kPsnMask, MrDescriptor{0, 0, 0}},
           {0, kPsnMask, std::nullopt}};
  ExpectRoundTrips(e);
}

// Endpoint.netdevs (field 13, issue 31): a writer without it gives an empty
// list; a MAC that is not six hex groups is refused naming the field.
TEST(CodecRoundTrip, NetdevsAreOptionalAndTheirMacIsChecked) {
  EndpointInfo e = SampleUc();
  ASSERT_TRUE(e.netdevs.empty());
  ExpectRoundTrips(e);
  e.netdevs = {{"veth1", {0x02, 0x00, 0x0a, 0x63, 0x00, 0x02}, 0, 1500}};
  std::string json = EncodeJson(e);
  const size_t at = json.find("02:00:0a:63:00:02");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(at, 17, "02:00:0a:63:00:0g");
  Result<EndpointInfo> bad = DecodeJson(json);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().attribute, "netdevs[0].mac") << bad.error().ToString();
  e.netdevs[0].vlan_id = 4095;
  EXPECT_FALSE(CheckWireRanges(e));
}

// GidEntry.prefix_length (field 7, issue 39): absent is 0 (unknown); at most
// 32 for an IPv4-mapped GID, 128 for another.
TEST(CodecRoundTrip, PrefixLengthsRoundTripAndAreBounded) {
  EndpointInfo e = SampleUc();
  ASSERT_FALSE(e.gid_table.empty());
  for (GidEntry& g : e.gid_table) EXPECT_EQ(g.prefix_len, 0);
  for (GidEntry& g : e.gid_table) g.prefix_len = IsIpv4MappedGid(g.gid) ? 24 : 64;
  if (e.path.sgid) e.path.sgid->prefix_len = 24;
  ExpectRoundTrips(e);
  EXPECT_NE(EncodeJson(e).find("\"prefix_length\": 24"), std::string::npos) << EncodeJson(e);
  for (GidEntry& g : e.gid_table) {
    if (IsIpv4MappedGid(g.gid)) g.prefix_len = 33;
  }
  Result<void> bad = CheckWireRanges(e);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().ToString().find("prefix_length"), std::string::npos)
      << bad.error().ToString();
}

TEST(CodecRoundTrip, GidsAreTextInJsonAndBytesInBinary) {
  const EndpointInfo e = SampleUc();
  const std::string json = EncodeJson(e);
  EXPECT_NE(json.find("\"gid_text\": \"::ffff:10.99.0.2\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"gid\":"), std::string::npos) << json;
  const std::string binary = EncodeBinary(e);
  const Gid g = *GidFromString("::ffff:10.99.0.2");
  EXPECT_NE(binary.find(std::string(g.begin(), g.end())), std::string::npos);
}

TEST(CodecBatch, OneQp) {
  const EndpointInfo e = Batch(1);
  ExpectRoundTrips(e);
}

// The measurement docs/wire-format.md quotes ("Batching"): run
//   codec_test --gtest_filter='CodecBatch.*'
// Per-QP cost = (size of N QPs - size of 1 QP) / (N - 1).
double PerQpBytes(const EndpointInfo& many) {
  EndpointInfo one = many;
  one.qps.resize(1);
  const double n = static_cast<double>(many.qps.size());
  return static_cast<double>(EncodeBinary(many).size() - EncodeBinary(one).size()) / (n - 1);
}

TEST(CodecBatch, TenThousandQpsCostAFewBytesEach) {
  const EndpointInfo e = Batch(10000);
  ExpectRoundTrips(e);
  const size_t total = EncodeBinary(e).size();
  const double per_qp = PerQpBytes(e);
  std::printf("10000 QPs, consecutive QPNs, random PSNs: %zu bytes, %.2f bytes/QP\n", total,
              per_qp);
  std::printf("  1 QP message: %zu bytes; JSON of 10000 QPs: %zu bytes\n",
              EncodeBinary(Batch(1)).size(), EncodeJson(e).size());
  // QPN delta (1 byte) + PSN varint (<= 4 bytes).
  EXPECT_LE(per_qp, 5.0);
}

TEST(CodecBatch, ScatteredQpnsAndMrsStayBounded) {
  EndpointInfo scattered = Batch(10000);
  std::mt19937 rng(7);
  for (QpEntry& qp : scattered.qps) qp.qpn = static_cast<uint32_t>(rng()) & kQpnMask;
  ExpectRoundTrips(scattered);
  const double scattered_per_qp = PerQpBytes(scattered);

  const EndpointInfo with_mr = Batch(10000, 0x000a00, true);
  ExpectRoundTrips(with_mr);
  const double mr_per_qp = PerQpBytes(with_mr);

  EndpointInfo zero_psn = Batch(10000);
  for (QpEntry& qp : zero_psn.qps) qp.psn = 0;
  const double zero_psn_per_qp = PerQpBytes(zero_psn);

  std::printf("10000 QPs, random QPNs, random PSNs: %.2f bytes/QP\n", scattered_per_qp);
  std::printf("10000 QPs, consecutive QPNs, random PSNs, an MR each: %.2f bytes/QP\n", mr_per_qp);
  std::printf("10000 QPs, consecutive QPNs, PSN 0 (NCCL): %.2f bytes/QP\n", zero_psn_per_qp);
  EXPECT_LE(scattered_per_qp, 8.0);  // QPN delta <= 4 bytes + PSN <= 4 bytes
  EXPECT_LE(mr_per_qp, 5.0 + 25.0);
  EXPECT_LE(zero_psn_per_qp, 2.1);  // delta 1 + PSN 1 + length prefixes
}

// The binary decoder also takes the row form (one Qp message per QP, what the
// JSON form uses); it is what the columns save. docs/wire-format.md quotes the
// printed comparison.
TEST(CodecBatch, RowFormInBinaryDecodesAndCostsMoreThanColumns) {
  const EndpointInfo e = Batch(10000);
  EndpointInfo no_qps = e;
  no_qps.qps.clear();
  std::string rows = EncodeBinary(no_qps) + VarintField(10, e.qps.size());
  const size_t base = rows.size();
  for (const QpEntry& qp : e.qps) {
    rows += LenField(11, VarintField(1, qp.qpn) + (qp.psn != 0 ? VarintField(2, qp.psn) : ""));
  }
  Result<EndpointInfo> back = DecodeBinary(rows);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, e);
  const double rows_per_qp = static_cast<double>(rows.size() - base) / 10000.0;
  std::printf("10000 QPs as rows (one Qp message each): %.2f bytes/QP; as columns: %.2f\n",
              rows_per_qp, PerQpBytes(e));
  EXPECT_GT(rows_per_qp, PerQpBytes(e) * 1.8);
}

TEST(CodecDump, RoundTripsWithPlanAndRemote) {
  Dump dump;
  dump.local.endpoint = SampleRc();
  dump.local.plan = SamplePlan();
  dump.remote = SampleUc();
  const std::string json = EncodeDumpJson(dump);
  Result<Dump> back = DecodeDumpJson(json);
  ASSERT_TRUE(back) << back.error().ToString() << "\n" << json;
  EXPECT_EQ(back->local.endpoint, dump.local.endpoint);
  EXPECT_EQ(back->local.plan, dump.local.plan);
  EXPECT_EQ(back->remote, dump.remote);
  EXPECT_NE(json.find("\"dgid\": \"fe80::202:c9ff:fe01:204\""), std::string::npos) << json;
}

// Issue 19: a plan made from the SA's path carries its static rate.
TEST(CodecDump, APlansStaticRateRoundTrips) {
  Dump dump;
  dump.local.endpoint = SampleRc();
  dump.local.plan = SamplePlan();
  ASSERT_FALSE(dump.local.plan->qps.empty());
  dump.local.plan->qps[0].ah.static_rate = 3;  // 10 Gb/s
  const std::string json = EncodeDumpJson(dump);
  Result<Dump> back = DecodeDumpJson(json);
  ASSERT_TRUE(back) << back.error().ToString() << "\n" << json;
  ASSERT_TRUE(back->local.plan.has_value());
  EXPECT_EQ(back->local.plan->qps[0].ah.static_rate, 3);
  EXPECT_NE(json.find("\"static_rate\": 3"), std::string::npos) << json;
}

TEST(CodecDump, RoundTripsWithoutPlanOrRemote) {
  Dump dump;
  dump.local.endpoint = SampleUd();
  Result<Dump> back = DecodeDumpJson(EncodeDumpJson(dump));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->local.endpoint, dump.local.endpoint);
  EXPECT_FALSE(back->local.plan);
  EXPECT_FALSE(back->remote);
}

TEST(CodecDump, AcceptsAPlainEndpoint) {
  Result<Dump> back = DecodeDumpJson(EncodeJson(SampleUc()));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->local.endpoint, SampleUc());
  EXPECT_FALSE(back->local.plan);
  EXPECT_FALSE(back->remote);
}

TEST(CodecDump, PlanWithEmptyQpListAndZeroDgidRoundTrips) {
  Dump dump;
  dump.local.endpoint = SampleRc();
  dump.local.plan = ConnectionPlan{};
  ConnectionPlan p = SamplePlan();
  p.qps[0].ah.dgid = Gid{};
  p.qps[0].ah.is_global = false;
  p.qps[0].remote_qkey.reset();
  dump.local.plan->qps = p.qps;
  Result<Dump> back = DecodeDumpJson(EncodeDumpJson(dump));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->local.plan, dump.local.plan);
}

}  // namespace
}  // namespace qpconnect::oob
