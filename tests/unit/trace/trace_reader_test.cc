// SPDX-License-Identifier: MIT
// ReadTrace() (qpconnect/observe/trace_reader.h): real traces recorded in
// the lab read into the observed-QP model, and hostile or malformed files
// refused with an error that names the line and the field.
#include "qpconnect/observe/trace_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace qpconnect::trace {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(QPC_TESTDATA_DIR) + "/trace/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr const char* kStart =
    R"({"qp_trace":1,"event":"start","pid":42,"host":"h","comm":"prog","argv":["prog"]})"
    "\n";
constexpr const char* kEnd = R"({"event":"end","t":1.0,"tid":42})"
                             "\n";

std::string Modify(const std::string& attr_and_mask, int result = 0, int err = 0) {
  return R"({"event":"modify_qp","t":0.1,"tid":42,"qp":"0x1","pd":"0x2","device":"rxe0","qpn":17,)"
         R"("qp_type":"RC","from":"INIT","to":"RTR",)" +
         attr_and_mask + R"(,"result":)" + std::to_string(result) + R"(,"errno":)" +
         std::to_string(err) + "}\n";
}

// Reads `text`; the error's detail, or "" when it was read.
std::string ErrorOf(const std::string& text, Observation* out = nullptr) {
  Observation o;
  Result<TraceHeader> r = ReadTrace(text, "t.json", out != nullptr ? *out : o);
  return r ? "" : r.error().detail;
}

TEST(TraceReader, ReadsARealRcPingpongTrace) {
  Observation o;
  Result<TraceHeader> h = ReadTrace(Fixture("rc_m512_server.json"), "s.json", o);
  ASSERT_TRUE(h) << h.error().detail;
  EXPECT_EQ(h->comm, "ibv_rc_pingpong");
  EXPECT_TRUE(h->complete);
  EXPECT_EQ(h->qps, 1u);
  ASSERT_EQ(o.qps.size(), 1u);
  const ObservedQp& q = o.qps[0];
  EXPECT_EQ(q.source, ObservedSource::kTrace);
  EXPECT_EQ(q.origin, "s.json");
  EXPECT_EQ(q.device, "rxe0");
  EXPECT_EQ(q.port, 1);
  EXPECT_EQ(q.qpn, 17u);
  EXPECT_EQ(q.transport, Transport::kRc);
  EXPECT_EQ(q.state, "RTS");
  EXPECT_TRUE(q.destroyed);
  EXPECT_FALSE(q.creation_unseen);
  EXPECT_EQ(q.dest_qpn, 17u);
  ASSERT_EQ(q.transitions.size(), 3u);
  EXPECT_EQ(q.transitions[1].from, "INIT");
  EXPECT_EQ(q.transitions[1].to, "RTR");
  EXPECT_EQ(q.transitions[1].attrs.path_mtu, Mtu::k512);
  ASSERT_TRUE(q.endpoint && q.applied);
  EXPECT_EQ(q.endpoint->port.link_layer, LinkLayer::kEthernet);
  EXPECT_TRUE(q.endpoint->port.active);
  EXPECT_EQ(q.endpoint->port.active_mtu, Mtu::k1024);
  EXPECT_EQ(q.endpoint->gid_table.size(), 2u);
  ASSERT_TRUE(q.endpoint->path.sgid);
  EXPECT_EQ(GidToString(q.endpoint->path.sgid->gid), "::ffff:10.99.0.1");
  EXPECT_EQ(q.endpoint->path.sgid->type, GidType::kRoceV2);
  EXPECT_EQ(q.endpoint->keys.pkey, 0xffff);
  EXPECT_EQ(q.endpoint->rd_atomic.device_max_qp_rd_atom, 128u);
  EXPECT_EQ(q.applied->path_mtu, Mtu::k512);
  EXPECT_EQ(q.applied->timeout, 14);
  EXPECT_EQ(q.endpoint->qps[0].psn, q.applied->sq_psn);
  EXPECT_EQ(GidToString(q.applied->ah.dgid), "::ffff:10.99.0.2");
  EXPECT_TRUE(o.notes.empty());
}

TEST(TraceReader, KeepsTheUdAddressHandlesOfTheQpsProtectionDomain) {
  Observation o;
  ASSERT_TRUE(ReadTrace(Fixture("ud_server.json"), "u.json", o));
  ASSERT_EQ(o.qps.size(), 1u);
  ASSERT_EQ(o.qps[0].address_handles.size(), 1u);
  EXPECT_EQ(GidToString(o.qps[0].address_handles[0].dgid), "::ffff:10.99.0.2");
  EXPECT_EQ(o.qps[0].applied->qkey, 0x11111111u);
  EXPECT_FALSE(o.qps[0].dest_qpn);
}

TEST(TraceReader, AppliesAFailedLastTransitionAsTheAttempt) {
  Observation o;
  ASSERT_TRUE(ReadTrace(Fixture("rc_badgid_server.json"), "b.json", o));
  const ObservedQp& q = o.qps[0];
  EXPECT_EQ(q.state, "INIT");
  ASSERT_EQ(q.transitions.size(), 2u);
  EXPECT_EQ(q.transitions[1].result, 61);
  EXPECT_EQ(q.transitions[1].sys_errno, 61);
  EXPECT_EQ(q.applied->ah.sgid_index, 7);
  EXPECT_NE(AppliedMask(q) & 0x80, 0);  // IBV_QP_AV
  EXPECT_FALSE(q.endpoint->path.sgid);  // index 7 is not in the table
}

TEST(TraceReader, LearnsAQpFirstSeenAtAModify) {
  Observation o;
  const std::string text = std::string(kStart) +
                           Modify(R"("mask":1048577,"attr":{"qp_state":"RTR","dest_qp_num":99})") +
                           kEnd;
  ASSERT_EQ(ErrorOf(text, &o), "");
  ASSERT_EQ(o.qps.size(), 1u);
  EXPECT_TRUE(o.qps[0].creation_unseen);
  EXPECT_EQ(o.qps[0].dest_qpn, 99u);
  EXPECT_EQ(o.qps[0].state, "RTR");
  EXPECT_EQ(o.qps[0].comm, "prog");
  EXPECT_EQ(o.qps[0].pid, 42);
}

TEST(TraceReader, NotesATraceWithoutAnEndRecord) {
  Observation o;
  ASSERT_EQ(ErrorOf(kStart, &o), "");
  ASSERT_EQ(o.notes.size(), 1u);
  EXPECT_NE(o.notes[0].find("no end record"), std::string::npos);
}

TEST(TraceReader, DropsALastLineCutShortWithANote) {
  Observation o;
  const std::string text = std::string(kStart) + R"({"event":"modify_qp","t":0.1,"qp)";
  ASSERT_EQ(ErrorOf(text, &o), "");
  ASSERT_FALSE(o.notes.empty());
  EXPECT_NE(o.notes[0].find("line 2 is cut short"), std::string::npos);
}

TEST(TraceReader, SkipsRecordsItDoesNotKnow) {
  const std::string text = std::string(kStart) +
                           R"({"event":"future_thing","x":[1,2]})"
                           "\n" +
                           R"({"event":"gid","by":"program","index":1})"
                           "\n" +
                           kEnd;
  EXPECT_EQ(ErrorOf(text), "");
}

TEST(TraceReader, RefusesAnEmptyFile) { EXPECT_EQ(ErrorOf(""), "is empty"); }

TEST(TraceReader, RefusesAFileThatIsNotATrace) {
  EXPECT_NE(ErrorOf("hello\n").find("not a qp-trace file"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"version":"1.0","qps":[]})").find("no \"qp_trace\""), std::string::npos);
  EXPECT_NE(ErrorOf("[1,2,3]\n").find("not a qp-trace file"), std::string::npos);
}

TEST(TraceReader, RefusesANewerFormatVersionWithItsOwnCode) {
  Observation o;
  Result<TraceHeader> r = ReadTrace(R"({"qp_trace":2,"event":"start","pid":1})"
                                    "\n",
                                    "t.json", o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().detail.find("version 2 is newer"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"qp_trace":0,"event":"start","pid":1})").find("field qp_trace"),
            std::string::npos);
}

TEST(TraceReader, NamesTheLineOfARecordThatIsNotJson) {
  const std::string text = std::string(kStart) + "{oops}\n" + kEnd;
  const std::string e = ErrorOf(text);
  EXPECT_NE(e.find("line 2: not JSON"), std::string::npos) << e;
}

TEST(TraceReader, NamesTheFieldOfAWronglyTypedValue) {
  const std::string text =
      std::string(kStart) +
      R"({"event":"create_qp","device":"rxe0","qpn":"seventeen","qp_type":"RC","result":0})"
      "\n";
  const std::string e = ErrorOf(text);
  EXPECT_NE(e.find("line 2 (create_qp): field qpn: expected an integer 0..4294967295, got "
                   "\"seventeen\""),
            std::string::npos)
      << e;
}

TEST(TraceReader, NamesANestedFieldOutOfRange) {
  const std::string text =
      std::string(kStart) +
      Modify(R"("mask":129,"attr":{"ah_attr":{"dlid":0,"port_num":300,"is_global":false}})");
  const std::string e = ErrorOf(text);
  EXPECT_NE(e.find("field attr.ah_attr.port_num: expected an integer 0..255"), std::string::npos)
      << e;
}

TEST(TraceReader, RefusesAMalformedGid) {
  const std::string text =
      std::string(kStart) +
      Modify(R"("mask":129,"attr":{"ah_attr":{"dlid":0,"port_num":1,"is_global":true,)"
             R"("grh":{"dgid":"not-a-gid","sgid_index":1,"hop_limit":1}}})");
  const std::string e = ErrorOf(text);
  EXPECT_NE(e.find("field attr.ah_attr.grh.dgid: expected an IPv6-style GID"), std::string::npos)
      << e;
}

TEST(TraceReader, RefusesAMaskWhoseAttributeIsMissing) {
  const std::string text = std::string(kStart) + Modify(R"("mask":256,"attr":{})");
  EXPECT_NE(ErrorOf(text).find("field attr.path_mtu"), std::string::npos);
}

TEST(TraceReader, RefusesAnMtuThatIsNotOne) {
  const std::string text = std::string(kStart) + Modify(R"("mask":256,"attr":{"path_mtu":1000})");
  EXPECT_NE(ErrorOf(text).find("256, 512, 1024, 2048 or 4096"), std::string::npos);
}

TEST(TraceReader, KeepsARawMtuEnumOutOfRange) {
  Observation o;
  const std::string text =
      std::string(kStart) + Modify(R"("mask":256,"attr":{"path_mtu_raw":7})", 22, 22) + kEnd;
  ASSERT_EQ(ErrorOf(text, &o), "");
  EXPECT_EQ(static_cast<int>(o.qps[0].transitions[0].attrs.path_mtu), 7);
}

TEST(TraceReader, RefusesASecondStartRecord) {
  EXPECT_NE(ErrorOf(std::string(kStart) + kStart).find("a second start record"), std::string::npos);
}

TEST(TraceReader, RefusesAnOverlongLine) {
  const std::string text = std::string(kStart) + "\"" + std::string(5u << 20, 'x') + "\"\n";
  EXPECT_NE(ErrorOf(text).find("longer than 4 MiB"), std::string::npos);
}

TEST(TraceReader, RefusesInvalidUtf8) {
  const std::string text = std::string(kStart) + "{\"event\":\"x\xff\"}\n" + kEnd;
  EXPECT_NE(ErrorOf(text).find("line 2: not JSON"), std::string::npos);
}

TEST(TraceReader, AppendsNothingWhenAFileIsRefused) {
  Observation o;
  const std::string text = Fixture("rc_m512_server.json") + "{oops}\n";
  EXPECT_FALSE(ReadTrace(text, "t.json", o));
  EXPECT_TRUE(o.qps.empty());
}

TEST(TraceReader, RecognisesAStartRecord) {
  EXPECT_TRUE(LooksLikeTrace("  {\"qp_trace\":1,"));
  EXPECT_FALSE(LooksLikeTrace("{\"version\":"));
  EXPECT_FALSE(LooksLikeTrace(""));
}

}  // namespace
}  // namespace qpconnect::trace
