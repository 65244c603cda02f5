// SPDX-License-Identifier: MIT
// The per-id part of a description (rdmacm/src/id_part.h): what a REQ/REP
// header carries rebuilds the sender's description from its base exactly,
// and a header out of range is refused naming the field.
#include "id_part.h"

#include <gtest/gtest.h>

namespace qpconnect::rdmacm {
namespace {

EndpointInfo ABase() {
  EndpointInfo e;
  e.port.port_num = 1;
  e.port.link_layer = LinkLayer::kEthernet;
  e.identity.device = "rxe0";
  e.qps = {QpEntry{0x11, 0x22, std::nullopt}, QpEntry{0x33, 0x44, std::nullopt}};
  return e;
}

Message AReq() {
  Message m;
  m.type = MsgType::kReq;
  m.qp_type = IBV_QPT_RC;
  m.qkey = 0;
  m.params.initiator_depth = 3;
  m.params.responder_resources = 5;
  m.params.qp_num = 0x1234;
  m.psn = 0xabcdef;
  return m;
}

TEST(QpcmIdPart, TheHeaderRebuildsTheSendersDescription) {
  // The sender's own description, as DescribeSide makes it.
  IdPart sent{Transport::kRc, 0, 3, 5, 0x1234, 0xabcdef};
  EndpointInfo senders = ABase();
  ApplyIdPart(senders, sent);
  // The receiver's: the base (whatever placeholder QP it held) and the header.
  auto part = IdPartOf(AReq());
  ASSERT_TRUE(part) << part.error().ToString();
  EndpointInfo rebuilt = ABase();
  ApplyIdPart(rebuilt, *part);
  EXPECT_EQ(rebuilt.qps, senders.qps);
  ASSERT_EQ(rebuilt.qps.size(), 1u);
  EXPECT_EQ(rebuilt.qps[0].qpn, 0x1234u);
  EXPECT_EQ(rebuilt.qps[0].psn, 0xabcdefu);
  EXPECT_EQ(rebuilt.transport, Transport::kRc);
  EXPECT_EQ(rebuilt.rd_atomic.max_rd_atomic, 3);
  EXPECT_EQ(rebuilt.rd_atomic.max_dest_rd_atomic, 5);
  EXPECT_EQ(rebuilt.identity.device, "rxe0");  // the base's fields stay
}

TEST(QpcmIdPart, UdCarriesItsQkey) {
  Message m = AReq();
  m.qp_type = IBV_QPT_UD;
  m.qkey = 0x01234567;
  auto part = IdPartOf(m);
  ASSERT_TRUE(part);
  EndpointInfo e = ABase();
  ApplyIdPart(e, *part);
  EXPECT_EQ(e.transport, Transport::kUd);
  EXPECT_EQ(e.keys.qkey, 0x01234567u);
}

// rdma_set_option's TOS rides in the header: the receiver's copy of the
// sender's description has its traffic class (the passive side then applies
// the request's, as rdma_cm's passive QP takes the request's path).
TEST(QpcmIdPart, TheTrafficClassRidesInTheHeader) {
  Message m = AReq();
  m.traffic_class = 96;
  auto part = IdPartOf(m);
  ASSERT_TRUE(part);
  EXPECT_EQ(part->traffic_class, 96);
  EndpointInfo e = ABase();
  ApplyIdPart(e, *part);
  EXPECT_EQ(e.path.traffic_class, 96);
}

TEST(QpcmIdPart, AHeaderOutOfRangeIsRefusedNamingTheField) {
  Message m = AReq();
  m.psn = 0x1000000;
  auto psn = IdPartOf(m);
  ASSERT_FALSE(psn);
  EXPECT_EQ(psn.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(psn.error().attribute, "psn");
  m = AReq();
  m.params.qp_num = 0x1000000;
  auto qpn = IdPartOf(m);
  ASSERT_FALSE(qpn);
  EXPECT_EQ(qpn.error().attribute, "qp_num");
  m = AReq();
  m.qp_type = IBV_QPT_UC;
  auto type = IdPartOf(m);
  ASSERT_FALSE(type);
  EXPECT_EQ(type.error().attribute, "qp_type");
}

}  // namespace
}  // namespace qpconnect::rdmacm
