// The attribute builders and the mask table, checked against the
// ibv_modify_qp(3) man page's "Required attributes" tables (the installed page
// when present, else the excerpt in tests/testdata/verbs).
#include "qpconnect/verbs/qp_attrs.h"

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
      EXPECT_EQ(Names(MasksFor(t, s).required), (tables[{tname, sname}]))
          << tname << " -> " << sname;
    }
  }
}

TEST(MaskTable, OptionalNeverOverlapsRequired) {
  for (Transport t : {Transport::kRc, Transport::kUc, Transport::kUd}) {
    for (QpState s : {QpState::kInit, QpState::kRtr, QpState::kRts}) {
      auto m = MasksFor(t, s);
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
  EXPECT_EQ(r.mask, MasksFor(Transport::kRc, QpState::kRtr).required);
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
