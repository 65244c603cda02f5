// SPDX-License-Identifier: MIT
// The attribute builders and the mask table, checked against the
// ibv_modify_qp(3) man page's "Required attributes" tables (the installed page
// when present, else the excerpt in tests/testdata/verbs).
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_state_table.h"

#include "qpconnect/verbs/qp_steps.h"
#include "qpconnect/verbs/session_layout.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace qpconnect::verbs {
namespace {

using TableKey = std::pair<std::string, std::string>;  // ("RC", "RTR")

// The state table's row into `to` on the path RESET->INIT->RTR->RTS.
QpTransitionRule PathRow(Transport t, QpState to) {
  const QpState from = to == QpState::kInit  ? QpState::kReset
                       : to == QpState::kRtr ? QpState::kInit
                                             : QpState::kRtr;
  return *FindTransition(t, from, to);
}

std::string ManPageText() {
  std::string text;
  if (FILE* p = popen("zcat /usr/share/man/man3/ibv_modify_qp.3.gz 2>/dev/null", "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    pclose(p);
  }
  if (text.find("Required attributes") != std::string::npos) return text;
  std::ifstream f(QPC_TESTDATA_DIR "/verbs/ibv_modify_qp.3.tables");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Parses the man page tables into (transport, next state) -> attribute names.
std::map<TableKey, std::set<std::string>> ParseTables(const std::string& text) {
  std::map<TableKey, std::set<std::string>> out;
  std::istringstream in(text);
  std::string line, transport, state;
  std::regex type_re("IBV_QPT_(UD|UC|RC)\\b");
  std::regex attr_re("IBV_QP_([A-Z_]+)");
  std::regex row_re("^(Init|RTR|RTS)\\b");
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.find("Transport Service Type") != std::string::npos) {
      transport = std::regex_search(line, m, type_re) ? m[1].str() : "";
      continue;
    }
    if (transport.empty()) continue;
    if (std::regex_search(line, m, row_re)) state = m[1].str() == "Init" ? "INIT" : m[1].str();
    if (line.rfind(".fi", 0) == 0) state.clear();
    if (state.empty()) continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), attr_re);
         it != std::sregex_iterator(); ++it) {
      out[{transport, state}].insert((*it)[1].str());
    }
  }
  return out;
}

std::set<std::string> Names(int mask) {
  std::set<std::string> s;
  std::string d = DecodeMask(mask);
  std::stringstream ss(d);
  std::string part;
  while (std::getline(ss, part, '|')) s.insert(part);
  return s;
}

TEST(MaskTable, RequiredMasksMatchTheManPage) {
  auto tables = ParseTables(ManPageText());
  ASSERT_EQ(tables.size(), 9u) << "could not parse the man page's nine table rows";
  const std::pair<const char*, Transport> transports[] = {
      {"RC", Transport::kRc}, {"UC", Transport::kUc}, {"UD", Transport::kUd}};
  const std::pair<const char*, QpState> states[] = {
      {"INIT", QpState::kInit}, {"RTR", QpState::kRtr}, {"RTS", QpState::kRts}};
  for (auto [tname, t] : transports) {
    for (auto [sname, s] : states) {
      EXPECT_EQ(Names(PathRow(t, s).required), (tables[{tname, sname}]))
          << tname << " -> " << sname;
    }
  }
}

TEST(MaskTable, OptionalNeverOverlapsRequired) {
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    for (QpState s : {QpState::kInit, QpState::kRtr, QpState::kRts}) {
      const QpTransitionRule m = PathRow(t, s);
      EXPECT_EQ(m.required & m.optional, 0) << TransportName(t) << " " << QpStateName(s);
    }
  }
}

QpAttrs SampleAttrs() {
  QpAttrs a;
  a.port_num = 1;
  a.pkey_index = 2;
  a.qkey = 0x11111111;
  a.path_mtu = Mtu::k2048;
  a.dest_qp_num = 0x1234;
  a.rq_psn = 0xabcdef;
  a.sq_psn = 0x123456;
  a.max_rd_atomic = 4;
  a.max_dest_rd_atomic = 8;
  a.ah.is_global = true;
  a.ah.dgid = *GidFromString("::ffff:10.99.0.2");
  a.ah.sgid_index = 1;
  a.ah.hop_limit = 64;
  return a;
}

TEST(Builders, RcRtrCarriesPeerQpnPsnMtuAndGrh) {
  auto r = BuildRtr(Transport::kRc, SampleAttrs());
  EXPECT_EQ(r.mask, PathRow(Transport::kRc, QpState::kRtr).required);
  EXPECT_EQ(r.attr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(r.attr.dest_qp_num, 0x1234u);
  EXPECT_EQ(r.attr.rq_psn, 0xabcdefu);
  EXPECT_EQ(r.attr.path_mtu, IBV_MTU_2048);
  EXPECT_EQ(r.attr.max_dest_rd_atomic, 8);
  EXPECT_EQ(r.attr.ah_attr.is_global, 1);
  EXPECT_EQ(r.attr.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(r.attr.ah_attr.grh.hop_limit, 64);
  EXPECT_EQ(r.attr.ah_attr.grh.dgid.raw[15], 2);
}

TEST(Builders, UdInitSetsQkeyNotAccessFlags) {
  auto r = BuildInit(Transport::kUd, SampleAttrs(), IBV_ACCESS_REMOTE_WRITE);
  EXPECT_EQ(r.mask & IBV_QP_QKEY, IBV_QP_QKEY);
  EXPECT_EQ(r.mask & IBV_QP_ACCESS_FLAGS, 0);
  EXPECT_EQ(r.attr.qkey, 0x11111111u);
  EXPECT_EQ(r.attr.pkey_index, 2);
}

TEST(Builders, RtsSendsRetryAndAtomicsOnlyForRc) {
  auto rc = BuildRts(Transport::kRc, SampleAttrs());
  EXPECT_EQ(rc.attr.sq_psn, 0x123456u);
  EXPECT_EQ(rc.attr.max_rd_atomic, 4);
  EXPECT_NE(rc.mask & IBV_QP_RETRY_CNT, 0);
  auto uc = BuildRts(Transport::kUc, SampleAttrs());
  EXPECT_EQ(uc.mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

TEST(Describe, DecodeMaskNamesBitsAndKeepsUnknownOnes) {
  EXPECT_EQ(DecodeMask(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU), "STATE|AV|PATH_MTU");
  EXPECT_EQ(DecodeMask(1 << 30), "0x40000000");
  EXPECT_EQ(DecodeMask(0), "0");
}

TEST(Describe, DescribeAttrListsEveryValueSent) {
  auto r = BuildRtr(Transport::kRc, SampleAttrs());
  std::string d = DescribeAttr(r.attr, r.mask);
  EXPECT_NE(d.find("path_mtu=2048"), std::string::npos) << d;
  EXPECT_NE(d.find("dest_qp_num=0x001234"), std::string::npos) << d;
  EXPECT_NE(d.find("rq_psn=0xabcdef"), std::string::npos) << d;
  EXPECT_NE(d.find("dgid=::ffff:10.99.0.2"), std::string::npos) << d;
  EXPECT_NE(d.find("sgid_index=1"), std::string::npos) << d;
  EXPECT_EQ(d.find("sq_psn"), std::string::npos) << d;  // not in the RTR mask
}

}  // namespace
}  // namespace qpconnect::verbs

namespace qpconnect::verbs {
namespace {

// ---- issue 12: the builders' contract, the Session's layout and Q_Key

TEST(Builders, SendExactlyTheRequiredAttributes) {
  QpAttrs a;
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    EXPECT_EQ(BuildInit(t, a, 0).mask, PathRow(t, QpState::kInit).required) << TransportName(t);
    EXPECT_EQ(BuildRtr(t, a).mask, PathRow(t, QpState::kRtr).required) << TransportName(t);
    EXPECT_EQ(BuildRts(t, a).mask, PathRow(t, QpState::kRts).required) << TransportName(t);
    // RESET from any state: the state alone.
    EXPECT_EQ(BuildReset(t).mask, IBV_QP_STATE) << TransportName(t);
    EXPECT_EQ(BuildReset(t).from, QpState::kUnknown) << TransportName(t);
  }
}

TEST(AddressVectorCheck, RefusesWhatIbvAhAttrCannotCarry) {
  AddressVector av;
  av.is_global = true;
  av.sgid_index = 256;  // would be truncated to 0
  auto r = CheckAddressVector(av);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().attribute, "sgid_index");
  EXPECT_NE(r.error().detail.find("select GID 0"), std::string::npos) << r.error().detail;
  av.sgid_index = 255;
  EXPECT_TRUE(CheckAddressVector(av));
  av.flow_label = 0x100000;
  EXPECT_EQ(CheckAddressVector(av).error().attribute, "flow_label");
  av.is_global = false;  // without a GRH neither field is sent
  EXPECT_TRUE(CheckAddressVector(av));
}

TEST(UdSendQkey, IsOwnQkeyUnlessThePlanOverrides) {
  ConnectionPlan plan;
  EXPECT_EQ(UdSendQkey(plan, 0x77), 0x77u);
  QpAttrs a;
  a.qkey = 0x11111111;
  plan.qps.push_back(a);
  EXPECT_EQ(UdSendQkey(plan, 0x77), 0x11111111u);
  plan.qps[0].remote_qkey = 0x22222222;
  EXPECT_EQ(UdSendQkey(plan, 0x77), 0x22222222u);
}

DeviceLimits RxeLikeLimits() {
  DeviceLimits l;
  l.max_qp = 1 << 16;
  l.max_qp_wr = 1 << 14;
  l.max_cqe = (1 << 15) - 1;
  l.max_mr_size = uint64_t{1} << 40;
  return l;
}

TEST(SessionLayout, LaysOutEachQpsAreasWithoutOverlap) {
  auto l = PlanSessionLayout({Transport::kUd, 3, 1000, 5, false}, RxeLikeLimits());
  ASSERT_TRUE(l) << l.error().ToString();
  EXPECT_EQ(l->recv_slot_bytes, 1040u);  // + GRH
  EXPECT_EQ(l->slot_bytes % 64, 0u);
  EXPECT_GE(l->slot_bytes, 4u * 1000 + 5u * 1040);
  EXPECT_EQ(l->buffer_bytes % 4096, 0u);
  EXPECT_GE(l->buffer_bytes, 3 * l->slot_bytes);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(l->Recv(i, 0), l->Send(i) + 1000);
    EXPECT_EQ(l->RdmaTarget(i), l->Recv(i, 4) + 1040);
    EXPECT_EQ(l->RdmaSource(i), l->RdmaTarget(i) + 1000);
    EXPECT_LE(l->ReadBack(i) + 1000, l->Send(i) + l->slot_bytes);  // stays in its slot
  }
  EXPECT_EQ(l->send_cqe, static_cast<int>(3 * kSendDepth + 1));
  EXPECT_EQ(l->recv_cqe, 3 * 5 + 1);
}

TEST(SessionLayout, RefusesWhatTheDeviceCannotMeetInsteadOfClamping) {
  const DeviceLimits limits = RxeLikeLimits();
  auto qps = PlanSessionLayout({Transport::kRc, 70000, 64, 1, false}, limits);
  ASSERT_FALSE(qps);
  EXPECT_EQ(qps.error().attribute, "qps");
  EXPECT_NE(qps.error().detail.find("max_qp 65536"), std::string::npos) << qps.error().detail;

  auto depth = PlanSessionLayout({Transport::kRc, 1, 64, 1 << 20, false}, limits);
  ASSERT_FALSE(depth);
  EXPECT_EQ(depth.error().attribute, "rx-depth");
  EXPECT_NE(depth.error().detail.find("max_qp_wr"), std::string::npos);

  // 10,000 QPs x 8 receives: 80,001 CQEs, above max_cqe 32,767 (was clamped).
  auto cq = PlanSessionLayout({Transport::kRc, 10000, 64, 8, false}, limits);
  ASSERT_FALSE(cq);
  EXPECT_EQ(cq.error().attribute, "rx-depth");
  EXPECT_NE(cq.error().detail.find("80001"), std::string::npos) << cq.error().detail;
  EXPECT_TRUE(PlanSessionLayout({Transport::kRc, 10000, 64, 2, false}, limits));

  // 65,536 x 65,536 overflows 32 bits (it wrapped to 1 before): checked in 64.
  DeviceLimits big;
  big.max_cqe = 0x7fffffff;
  auto wrap = PlanSessionLayout({Transport::kRc, 65536, 64, 65536, false}, big);
  ASSERT_FALSE(wrap);
  EXPECT_NE(wrap.error().detail.find("4294967297"), std::string::npos) << wrap.error().detail;

  DeviceLimits small_mr = limits;
  small_mr.max_mr_size = 1 << 20;
  auto mr = PlanSessionLayout({Transport::kRc, 1000, 4096, 8, false}, small_mr);
  ASSERT_FALSE(mr);
  EXPECT_EQ(mr.error().attribute, "size");
  EXPECT_NE(mr.error().detail.find("max_mr_size"), std::string::npos);
}

// Issue 15: 10,000 QPs at qp-connect's default sizes (4096 bytes, 16
// receives) fit in one slot and in CQs the device can create.
TEST(SessionLayout, SharedBuffersDoNotGrowWithTheQpCount) {
  auto one = PlanSessionLayout({Transport::kRc, 1, 4096, 16, true}, RxeLikeLimits());
  auto many = PlanSessionLayout({Transport::kRc, 10000, 4096, 16, true}, RxeLikeLimits());
  ASSERT_TRUE(one) << one.error().ToString();
  ASSERT_TRUE(many) << many.error().ToString();
  EXPECT_EQ(many->buffer_bytes, one->buffer_bytes);
  EXPECT_EQ(many->stride, 0u);
  for (size_t i : {size_t{1}, size_t{9999}}) {
    EXPECT_EQ(many->Send(i), many->Send(0));
    EXPECT_EQ(many->Recv(i, 15), many->Recv(0, 15));
    EXPECT_EQ(many->ReadBack(i), many->ReadBack(0));
  }
  EXPECT_LE(many->ReadBack(0) + 4096, many->buffer_bytes);
  EXPECT_EQ(many->recv_cqe, static_cast<int>(kSharedCqCap + 1));
  EXPECT_EQ(many->send_cqe, static_cast<int>(kSharedCqCap + 1));
  // Below the cap, every WR still gets its entry.
  EXPECT_EQ(one->recv_cqe, 16 + 1);
  EXPECT_EQ(one->send_cqe, static_cast<int>(kSendDepth + 1));
  // Per-QP buffers, as before: one slot per QP.
  auto per_qp = PlanSessionLayout({Transport::kRc, 10, 4096, 16, false}, RxeLikeLimits());
  ASSERT_TRUE(per_qp);
  EXPECT_EQ(per_qp->stride, per_qp->slot_bytes);
  EXPECT_GE(per_qp->buffer_bytes, 10 * per_qp->slot_bytes);
}

}  // namespace
}  // namespace qpconnect::verbs
