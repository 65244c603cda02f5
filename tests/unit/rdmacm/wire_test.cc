// SPDX-License-Identifier: MIT
// The library's CM message bodies (rdmacm/src/wire.h): every type
// round-trips, and any byte string decodes to a message or a kProtocol error
// naming the field, never a crash. (Their frames, hello and keys are the oob
// stream session's: tests/unit/oob/stream_session_test.cc.)
#include "wire.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace qpconnect::rdmacm {
namespace {

Message Sample(MsgType type) {
  Message m;
  m.type = type;
  m.dst = 0x01020304;
  m.src = 0xa0b0c0d0;
  m.port_space = RDMA_PS_TCP;
  m.qp_type = IBV_QPT_RC;
  m.params.responder_resources = 4;
  m.params.initiator_depth = 3;
  m.params.retry_count = 6;
  m.params.rnr_retry_count = 5;
  m.params.qp_num = 0x123456;
  m.qkey = RDMA_UDP_QKEY;
  m.psn = 0xabcdef;
  m.base = 7;
  m.reason = 28;
  m.traffic_class = 96;
  m.ece = Ece{0x0002c9, 0x80000005};
  auto& sin = reinterpret_cast<sockaddr_in&>(m.src_addr);
  sin.sin_family = AF_INET;
  sin.sin_port = htons(7174);
  inet_pton(AF_INET, "10.77.0.2", &sin.sin_addr);
  m.private_data = std::string("hello\0world", 11);
  m.endpoint = std::string(300, '\x7f');
  m.text = "refused by the validator";
  return m;
}

TEST(QpcmWire, EveryTypeRoundTrips) {
  for (MsgType t : {MsgType::kReq, MsgType::kRep, MsgType::kRej, MsgType::kRtu, MsgType::kDreq,
                    MsgType::kDrep, MsgType::kMra}) {
    Message in = Sample(t);
    auto out = DecodeBody(EncodeBody(in));
    ASSERT_TRUE(out) << out.error().ToString();
    EXPECT_EQ(out->type, t);
    EXPECT_EQ(out->dst, in.dst);
    EXPECT_EQ(out->src, in.src);
    EXPECT_EQ(out->params.qp_num, in.params.qp_num);
    EXPECT_EQ(out->params.responder_resources, 4);
    EXPECT_EQ(out->params.initiator_depth, 3);
    EXPECT_EQ(out->qkey, in.qkey);
    EXPECT_EQ(out->psn, 0xabcdefu);
    EXPECT_EQ(out->base, 7u);
    EXPECT_EQ(out->reason, 28);
    EXPECT_EQ(out->traffic_class, 96);
    EXPECT_EQ(out->ece.vendor_id, 0x0002c9u);  // protocol 6: a REQ's and a REP's ECE
    EXPECT_EQ(out->ece.options, 0x80000005u);
    EXPECT_EQ(out->private_data, in.private_data);
    EXPECT_EQ(out->endpoint, in.endpoint);
    EXPECT_EQ(out->text, in.text);
    EXPECT_EQ(std::memcmp(&out->src_addr, &in.src_addr, sizeof(sockaddr_in)), 0);
  }
}

TEST(QpcmWire, HelloIsTheSessionsNotAMessage) {
  // Type 1 was the library's own HELLO; the stream session's hello took its
  // place, so a body of that type is refused like an unknown one.
  std::string body = EncodeBody(Sample(MsgType::kReq));
  body[0] = static_cast<char>(MsgType::kHello);
  auto refused = DecodeBody(body);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().attribute, "type");
}

TEST(QpcmWire, EveryTruncationIsRefusedNamingAField) {
  std::string body = EncodeBody(Sample(MsgType::kReq));
  for (size_t n = 0; n < body.size(); ++n) {
    auto out = DecodeBody(std::string_view(body).substr(0, n));
    ASSERT_FALSE(out) << "accepted " << n << " of " << body.size() << " bytes";
    EXPECT_EQ(out.error().code, ErrorCode::kProtocol);
    EXPECT_FALSE(out.error().attribute.empty());
  }
}

TEST(QpcmWire, TrailingBytesAndUnknownTypesAreRefused) {
  std::string body = EncodeBody(Sample(MsgType::kRtu)) + "x";
  auto trailing = DecodeBody(body);
  ASSERT_FALSE(trailing);
  EXPECT_EQ(trailing.error().attribute, "body");
  auto unknown = DecodeBody(std::string("\x09", 1));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().attribute, "type");
}

TEST(QpcmWire, ALengthBeyondTheBodyIsRefusedBeforeUse) {
  std::string body = EncodeBody(Sample(MsgType::kRep));
  // The private data's length field follows the fixed header: dst 4, src 4,
  // port space 2, QP type 1, six one-byte parameters, qp_num 4, Q_Key 4,
  // psn 4, base 4, reason 2, traffic class 1, ECE 8, family 1, port 2,
  // address 16 = 63 bytes after the type byte.
  size_t at = 1 + 63;
  ASSERT_EQ(static_cast<uint8_t>(body[at + 1]), 11);  // the sample's 11 bytes: the right field
  body[at] = '\x00';
  body[at + 1] = '\xff';  // 255 bytes claimed, 11 there (and text/endpoint after)
  auto out = DecodeBody(body);
  ASSERT_FALSE(out);
  body[at + 1] = '\x01';
  body[at] = '\x01';  // 257: above the cap
  auto capped = DecodeBody(body);
  ASSERT_FALSE(capped);
  EXPECT_EQ(capped.error().attribute, "private_data");
}

TEST(QpcmWire, RandomBytesNeverCrash) {
  std::mt19937 rng(29);
  std::string good = EncodeBody(Sample(MsgType::kReq));
  for (int i = 0; i < 20000; ++i) {
    std::string b = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<char>(rng());
    if (rng() % 3 == 0) b.resize(rng() % b.size());
    auto out = DecodeBody(b);
    if (out) {
      EXPECT_LE(out->private_data.size(), 255u);
    }
  }
}

}  // namespace
}  // namespace qpconnect::rdmacm
