// SPDX-License-Identifier: MIT
// The SA PathRecord codec and resolver, over a scripted MadChannel and bytes
// captured from OpenSM 3.3.23 on ibsim (tests/testdata/sa/README.md).
#include "qpconnect/sa/path_resolver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

namespace qpconnect::sa {
namespace {

std::vector<uint8_t> ReadHex(const std::string& name) {
  std::ifstream in(std::string(QPC_TESTDATA_DIR) + "/sa/" + name);
  EXPECT_TRUE(in) << name;
  std::vector<uint8_t> bytes;
  unsigned v = 0;
  while (in >> std::hex >> v) bytes.push_back(static_cast<uint8_t>(v));
  return bytes;
}

uint16_t At16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint64_t At64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}
void Set64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}

// Hca2 of tests/sim/fabrics/two_switch.net as OpenSM programmed it.
SaPort Hca2() {
  SaPort p;
  p.ca_name = "ibsim0";
  p.port_num = 1;
  p.lid = 4;
  p.sm_lid = 1;
  p.state = 4;
  p.gid = *GidFromString("fe80::10:3");
  p.link_layer = LinkLayer::kInfiniBand;
  return p;
}

// A reply built from a captured one, answering `request` (its TID), with the
// kernel's agent id in the upper 32 TID bits as umad delivers it.
std::vector<uint8_t> Answer(std::vector<uint8_t> reply, const std::array<uint8_t, kMadSize>& req) {
  Set64(reply.data() + 8, (uint64_t{7} << 32) | (At64(req.data() + 8) & 0xffffffffu));
  return reply;
}

// Scripted channel: each Send is answered by the next responder (nullopt: the
// SA stays silent for that send).
class ScriptedChannel : public MadChannel {
 public:
  using Responder =
      std::function<std::vector<std::vector<uint8_t>>(const std::array<uint8_t, kMadSize>&)>;
  void Then(Responder r) { script_.push_back(std::move(r)); }

  Result<void> Send(const std::array<uint8_t, kMadSize>& mad) override {
    sent.push_back(mad);
    if (!script_.empty()) {
      for (auto& m : script_.front()(mad)) inbox_.push_back(std::move(m));
      script_.pop_front();
    }
    return {};
  }
  Result<std::vector<uint8_t>> Receive(std::chrono::milliseconds) override {
    if (inbox_.empty()) return Error(ErrorCode::kTimeout, 0, "receive");
    auto m = std::move(inbox_.front());
    inbox_.pop_front();
    return m;
  }
  std::vector<std::array<uint8_t, kMadSize>> sent;

 private:
  std::deque<Responder> script_;
  std::deque<std::vector<uint8_t>> inbox_;
};

ResolveOptions Fast() {
  ResolveOptions o;
  o.try_timeout = std::chrono::milliseconds(20);
  o.deadline = std::chrono::milliseconds(1000);
  return o;
}

TEST(EncodePathQuery, LidQueryCarriesSlidDlidReversibleOnePath) {
  PathQuery q;
  q.dlid = 6;
  auto m = EncodePathQuery(Hca2(), q, 0x51c000000001ull);
  EXPECT_EQ(m[0], 1);     // BaseVersion
  EXPECT_EQ(m[1], 0x03);  // SubnAdm
  EXPECT_EQ(m[2], 2);     // ClassVersion
  EXPECT_EQ(m[3], 0x12);  // SubnAdmGetTable
  EXPECT_EQ(At64(&m[8]), 0x51c000000001ull);
  EXPECT_EQ(At16(&m[16]), 0x0035);  // PathRecord
  // ComponentMask: DLID (4), SLID (5), Reversible (11), NumbPath (12).
  EXPECT_EQ(At64(&m[48]), (1ull << 4) | (1ull << 5) | (1ull << 11) | (1ull << 12));
  EXPECT_EQ(At16(&m[56 + 40]), 6);  // DLID
  EXPECT_EQ(At16(&m[56 + 42]), 4);  // SLID
  EXPECT_EQ(m[56 + 49], 0x81);      // reversible, NumbPath 1
  // The same bytes OpenSM answered on the simulated fabric.
  auto captured = ReadHex("req_lid.hex");
  ASSERT_EQ(captured.size(), kMadSize);
  EXPECT_TRUE(std::equal(m.begin(), m.end(), captured.begin()));
}

TEST(EncodePathQuery, GidQueryCarriesSgidDgidAndOptionalPkeySl) {
  PathQuery q;
  q.dgid = *GidFromString("fe80::10:1");
  q.pkey = 0x8001;
  q.sl = 3;
  auto m = EncodePathQuery(Hca2(), q, 1);
  // DGID (2), SGID (3), Reversible, NumbPath, P_Key (13), SL (15).
  EXPECT_EQ(At64(&m[48]),
            (1ull << 2) | (1ull << 3) | (1ull << 11) | (1ull << 12) | (1ull << 13) | (1ull << 15));
  EXPECT_EQ(m[56 + 8], 0xfe);
  EXPECT_EQ(m[56 + 23], 0x01);  // DGID's last byte
  EXPECT_EQ(m[56 + 39], 0x03);  // SGID's last byte
  EXPECT_EQ(At16(&m[56 + 40]), 0);
  EXPECT_EQ(At16(&m[56 + 50]), 0x8001);
  EXPECT_EQ(At16(&m[56 + 52]) & 0xf, 3);
}

TEST(DecodePathReply, ReadsOpenSmsRecordFieldByField) {
  auto bytes = ReadHex("reply_lid.hex");
  auto reply = DecodePathReply(bytes.data(), bytes.size());
  ASSERT_TRUE(reply) << reply.error().ToString();
  EXPECT_EQ(reply->status, 0);
  ASSERT_EQ(reply->records.size(), 1u);
  const PathRecord& r = reply->records[0];
  EXPECT_EQ(GidToString(r.dgid), "fe80::10:7");
  EXPECT_EQ(GidToString(r.sgid), "fe80::10:3");
  EXPECT_EQ(r.dlid, 6);
  EXPECT_EQ(r.slid, 4);
  EXPECT_EQ(r.pkey, 0x8001);
  EXPECT_TRUE(r.reversible);
  EXPECT_EQ(r.sl, 0);
  EXPECT_EQ(r.mtu, Mtu::k2048);
  EXPECT_EQ(r.mtu_selector, 2);
  EXPECT_EQ(r.rate, 2);  // the 1x SDR link to Hca4: 2.5 Gb/s
  EXPECT_EQ(r.rate_selector, 2);
  EXPECT_EQ(r.packet_lifetime, 18);
  EXPECT_EQ(r.hop_limit, 0);
  EXPECT_EQ(r.flow_label, 0u);
}

TEST(DecodePathReply, EmptyTableHasNoRecords) {
  auto bytes = ReadHex("reply_empty.hex");
  auto reply = DecodePathReply(bytes.data(), bytes.size());
  ASSERT_TRUE(reply) << reply.error().ToString();
  EXPECT_TRUE(reply->records.empty());
}

TEST(DecodePathReply, RmppPayloadLengthBoundsTheRecords) {
  // A kernel-delivered 256-byte MAD: one record, the rest padding.
  auto bytes = ReadHex("reply_lid.hex");
  bytes.resize(kMadSize, 0);
  bytes[26] = 0x03;     // RMPP active, first segment
  bytes[35] = 20 + 64;  // PayloadLength: SA header + one record
  auto reply = DecodePathReply(bytes.data(), bytes.size());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->records.size(), 1u);
  bytes[35] = 19;  // less than the SA header
  EXPECT_EQ(DecodePathReply(bytes.data(), bytes.size()).error().attribute, "payload_length");
}

TEST(DecodePathReply, HostileRepliesAreProtocolErrorsNamingTheField) {
  const auto good = ReadHex("reply_lid.hex");
  for (size_t n = 0; n < 56; ++n) {
    auto r = DecodePathReply(good.data(), n);
    ASSERT_FALSE(r) << n;
    EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
    EXPECT_EQ(r.error().attribute, "length");
  }
  EXPECT_EQ(DecodePathReply(nullptr, 0).error().attribute, "length");
  struct Case {
    size_t offset;
    uint8_t value;
    const char* attribute;
  };
  for (const Case& c :
       {Case{1, 0x81, "mgmt_class"}, Case{3, 0x81, "method"}, Case{3, 0x12, "method"},
        Case{17, 0x38, "attribute_id"}, Case{45, 4, "attribute_offset"}}) {
    auto bytes = good;
    bytes[c.offset] = c.value;
    auto r = DecodePathReply(bytes.data(), bytes.size());
    ASSERT_FALSE(r) << c.attribute;
    EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
    EXPECT_EQ(r.error().attribute, c.attribute);
  }
  // A record cut short is not read.
  auto r = DecodePathReply(good.data(), good.size() - 1);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->records.empty());
}

TEST(DecodePathReply, RandomBytesNeverCrash) {
  std::mt19937 rng(19);
  const auto good = ReadHex("reply_lid.hex");
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = good;
    bytes.resize(rng() % 300);
    for (auto& b : bytes) {
      if (rng() % 8 == 0) b = static_cast<uint8_t>(rng());
    }
    auto r = DecodePathReply(bytes.data(), bytes.size());
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
    } else {
      EXPECT_LE(r->records.size(), 4u);
    }
  }
}

TEST(ResolvePath, ReturnsTheRecordAnsweringItsTid) {
  ScriptedChannel ch;
  const auto reply = ReadHex("reply_lid.hex");
  ch.Then([&](const auto& req) {
    auto stale = Answer(reply, req);
    stale[15] ^= 0x5a;  // a late answer to some earlier query
    return std::vector<std::vector<uint8_t>>{stale, Answer(reply, req)};
  });
  PathQuery q;
  q.dlid = 6;
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->dlid, 6);
  EXPECT_EQ(r->rate, 2);
  EXPECT_EQ(ch.sent.size(), 1u);
}

TEST(ResolvePath, RetriesWithNewTidThenTimesOutWithinTheDeadline) {
  ScriptedChannel ch;  // never answers
  PathQuery q;
  q.dlid = 6;
  const auto start = std::chrono::steady_clock::now();
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(r.error().attribute, "sa");
  EXPECT_NE(r.error().detail.find("4 tries"), std::string::npos) << r.error().detail;
  ASSERT_EQ(ch.sent.size(), 4u);
  EXPECT_NE(At64(&ch.sent[0][8]), At64(&ch.sent[1][8]));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(ResolvePath, AnswersOnTheSecondTry) {
  ScriptedChannel ch;
  const auto reply = ReadHex("reply_lid.hex");
  ch.Then([](const auto&) { return std::vector<std::vector<uint8_t>>{}; });
  ch.Then([&](const auto& req) { return std::vector<std::vector<uint8_t>>{Answer(reply, req)}; });
  PathQuery q;
  q.dlid = 6;
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(ch.sent.size(), 2u);
}

TEST(ResolvePath, NoSubnetManagerIsRefusedBeforeSending) {
  ScriptedChannel ch;
  SaPort port = Hca2();
  port.sm_lid = 0;
  port.state = 2;  // INIT: no SM has brought the port up
  PathQuery q;
  q.dlid = 6;
  auto r = ResolvePath(ch, port, q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().attribute, "sm_lid");
  EXPECT_TRUE(ch.sent.empty());
}

TEST(ResolvePath, EthernetPortHasNoSa) {
  ScriptedChannel ch;
  SaPort port = Hca2();
  port.link_layer = LinkLayer::kEthernet;
  PathQuery q;
  q.dlid = 6;
  auto r = ResolvePath(ch, port, q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(r.error().attribute, "link_layer");
}

TEST(ResolvePath, EmptyTableIsNoPath) {
  ScriptedChannel ch;
  const auto empty = ReadHex("reply_empty.hex");
  ch.Then([&](const auto& req) { return std::vector<std::vector<uint8_t>>{Answer(empty, req)}; });
  PathQuery q;
  q.dlid = 99;
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().attribute, "path");
  EXPECT_NE(r.error().detail.find("LID 99"), std::string::npos);
}

TEST(ResolvePath, PathOutsideTheAskedPartitionIsARefusal) {
  ScriptedChannel ch;
  const auto empty = ReadHex("reply_empty.hex");
  auto other = ReadHex("reply_lid.hex");
  other[56 + 50] = 0xff;  // the SA's path is in the default partition
  other[56 + 51] = 0xff;
  ch.Then([&](const auto& req) { return std::vector<std::vector<uint8_t>>{Answer(empty, req)}; });
  ch.Then([&](const auto& req) {
    EXPECT_EQ(At64(&req[48]) & (1ull << 13), 0u);  // asked again without the P_Key
    return std::vector<std::vector<uint8_t>>{Answer(other, req)};
  });
  PathQuery q;
  q.dlid = 7;
  q.pkey = 0x8001;
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIncompatible);
  EXPECT_EQ(r.error().attribute, "pkey");
  EXPECT_NE(r.error().detail.find("0x8001"), std::string::npos);
  EXPECT_NE(r.error().detail.find("0xffff"), std::string::npos);
}

TEST(ResolvePath, ErrorStatusIsNamed) {
  ScriptedChannel ch;
  auto bad = ReadHex("reply_empty.hex");
  bad[4] = 0x02;  // ERR_REQ_INVALID
  ch.Then([&](const auto& req) { return std::vector<std::vector<uint8_t>>{Answer(bad, req)}; });
  PathQuery q;
  q.dlid = 6;
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(r.error().attribute, "status");
  EXPECT_NE(r.error().detail.find("request invalid (0x0200)"), std::string::npos)
      << r.error().detail;
}

TEST(ResolvePath, NoRecordsStatusIsNoPath) {
  ScriptedChannel ch;
  auto none = ReadHex("reply_empty.hex");
  none[4] = 0x03;  // ERR_NO_RECORDS
  ch.Then([&](const auto& req) { return std::vector<std::vector<uint8_t>>{Answer(none, req)}; });
  PathQuery q;
  q.dlid = 6;
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().attribute, "path");
}

TEST(ResolvePath, MalformedReplyIsAProtocolError) {
  ScriptedChannel ch;
  ch.Then([](const auto&) { return std::vector<std::vector<uint8_t>>{{1, 3, 2}}; });
  PathQuery q;
  q.dlid = 6;
  auto r = ResolvePath(ch, Hca2(), q, Fast());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(r.error().attribute, "length");
}

TEST(ResolvePath, NeedsExactlyOneDestination) {
  ScriptedChannel ch;
  EXPECT_EQ(ResolvePath(ch, Hca2(), PathQuery{}, Fast()).error().code, ErrorCode::kInvalidArgument);
  PathQuery both;
  both.dlid = 1;
  both.dgid = Gid{};
  EXPECT_EQ(ResolvePath(ch, Hca2(), both, Fast()).error().code, ErrorCode::kInvalidArgument);
}

TEST(ParseDestination, LidsAndGids) {
  EXPECT_EQ(*ParseDestination("6")->dlid, 6);
  EXPECT_EQ(*ParseDestination("0x1f")->dlid, 0x1f);
  EXPECT_EQ(*ParseDestination("0xbfff")->dlid, 0xbfff);
  EXPECT_EQ(GidToString(*ParseDestination("fe80::10:7")->dgid), "fe80::10:7");
  for (const char* bad :
       {"", "0", "0xc000", "49152", "-1", "12a", "0x", "fe80::zz", "lid6", "1234567"}) {
    auto r = ParseDestination(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(PathRecordValues, RateLifetimeAndAckTimeout) {
  EXPECT_EQ(RateGbps(2), 2.5);
  EXPECT_EQ(RateGbps(3), 10);
  EXPECT_EQ(RateGbps(7), 40);
  EXPECT_EQ(RateGbps(0), 0);
  EXPECT_EQ(IbTimeValue(0).count(), 4096);
  EXPECT_EQ(IbTimeValue(18).count(), 4096ll << 18);
  EXPECT_EQ(IbTimeValue(63), IbTimeValue(31));
  EXPECT_EQ(AckTimeoutForPacketLifetime(18), 19);
  EXPECT_EQ(AckTimeoutForPacketLifetime(31), 31);
  EXPECT_NE(MadStatusText(0x0300).find("no records"), std::string::npos);
  EXPECT_NE(MadStatusText(0x000c).find("method/attribute"), std::string::npos);
}

}  // namespace
}  // namespace qpconnect::sa
