// SPDX-License-Identifier: MIT
// qp-info --path: argument handling and the record's output, without a fabric
// (the `sim` tests run it against OpenSM).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>

#include "exit_codes.h"
#include "path_mode.h"
#include "run.h"
#include "sa_report.h"
#include "skip_or_fail.h"

namespace qpconnect::tools {
namespace {

int RunTool(std::vector<std::string> args, std::string* err_text = nullptr) {
  std::ostringstream out, err;
  int rc = RunQpInfo(args, out, err);
  if (err_text) *err_text = err.str();
  return rc;
}

TEST(QpInfoPath, BadDestinationsAreUsageErrorsNamingThem) {
  std::string err;
  EXPECT_EQ(RunTool({"--path", "lid6"}, &err), kExitUsage);
  EXPECT_NE(err.find("'lid6'"), std::string::npos) << err;
  EXPECT_EQ(RunTool({"--path", "0"}, &err), kExitUsage);
  EXPECT_NE(err.find("not a unicast LID"), std::string::npos) << err;
  EXPECT_EQ(RunTool({"--path", "fe80::zz"}, &err), kExitUsage);
  EXPECT_NE(err.find("not a GID"), std::string::npos) << err;
  EXPECT_EQ(RunTool({"--path"}, &err), kExitUsage);
}

TEST(QpInfoPath, QueryOptionsNeedPathAndRange) {
  std::string err;
  EXPECT_EQ(RunTool({"--pkey", "0x8001"}, &err), kExitUsage);
  EXPECT_NE(err.find("--pkey needs --path"), std::string::npos) << err;
  EXPECT_EQ(RunTool({"--path", "6", "--pkey", "0x8000"}, &err), kExitUsage);
  EXPECT_EQ(RunTool({"--path", "6", "--sl", "16"}, &err), kExitUsage);
  EXPECT_EQ(RunTool({"--path", "6", "--timeout", "0"}, &err), kExitUsage);
  EXPECT_EQ(RunTool({"--path", "6", "-i", "0"}, &err), kExitUsage);
}

TEST(QpInfoPath, NoUmadDeviceIsNoDevice) {
  struct stat st;
  if (stat("/sys/class/infiniband_mad", &st) == 0 || getenv("LD_PRELOAD") != nullptr) {
    QPC_SKIP_OR_FAIL("this host has umad devices");
  }
  std::string err;
  EXPECT_EQ(RunTool({"--path", "6"}, &err), kExitNoDevice);
  EXPECT_NE(err.find("umad_get_port"), std::string::npos) << err;
}

TEST(QpInfoPath, JsonNamesEveryField) {
  PathRecord r;
  r.dlid = 6;
  r.slid = 4;
  r.pkey = 0x8001;
  r.mtu = Mtu::k2048;
  r.mtu_selector = 2;
  r.rate = 2;
  r.packet_lifetime = 18;
  r.hop_limit = 64;
  r.flow_label = 0x12345;
  r.reversible = true;
  auto j = PathRecordToJson(r);
  EXPECT_EQ(j["dlid"], 6);
  EXPECT_EQ(j["pkey"], "0x8001");
  EXPECT_EQ(j["mtu"], 2048);
  EXPECT_EQ(j["mtu_code"], 4);
  EXPECT_EQ(j["rate_gbps"], 2.5);
  EXPECT_EQ(j["ack_timeout"], 19);
  EXPECT_EQ(j["flow_label"], 0x12345);
  EXPECT_EQ(j["hop_limit"], 64);
  EXPECT_EQ(j["reversible"], true);
  sa::SaPort port;
  port.ca_name = "ibsim0";
  port.port_num = 1;
  port.sm_lid = 1;
  const std::string text = FormatPathRecordText(port, r);
  EXPECT_NE(text.find("slid 4 -> dlid 6"), std::string::npos) << text;
  EXPECT_NE(text.find("rate 2.5 Gb/s"), std::string::npos) << text;
  EXPECT_NE(text.find("ack_timeout 19"), std::string::npos) << text;
}

}  // namespace
}  // namespace qpconnect::tools
