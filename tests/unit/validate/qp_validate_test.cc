// SPDX-License-Identifier: MIT
// qp-validate run in-process through Run(): exit statuses, the done-when
// fixtures of issue 4, text and JSON output, and unusable input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "qpconnect/observe/live_judge.h"
#include "qpconnect/validate.h"
#include "run.h"
#include "snapshot_mode.h"
#include "unit/tools/version_check.h"

namespace qpconnect::tools::qp_validate {
namespace {

std::string Data(const std::string& name) {
  return std::string(QPC_TESTDATA_DIR) + "/validate/" + name;
}

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

Outcome RunCli(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out;
  std::ostringstream err;
  const int code = Run(args, in, out, err);
  return {code, out.str(), err.str()};
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(QpValidate, CleanRcPairExitsZero) {
  const Outcome o = RunCli({Data("rc_clean_a.json"), Data("rc_clean_b.json")});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("0 errors"), std::string::npos) << o.out;
  EXPECT_TRUE(o.err.empty()) << o.err;
}

TEST(QpValidate, BrokenPairExitsOneAndNamesPsnMtuAndGidType) {
  const Outcome o = RunCli({Data("rc_broken_a.dump.json"), Data("rc_broken_b.dump.json")});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  for (const char* s : {"psn-mismatch  rq_psn", "mtu-mismatch  path_mtu",
                        "gid-type-mismatch  sgid_index", "roce-v1", "roce-v2", "3 errors"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
}

TEST(QpValidate, JsonNamesTheSameThreeAttributes) {
  const Outcome o =
      RunCli({"--json", Data("rc_broken_a.dump.json"), Data("rc_broken_b.dump.json")});
  ASSERT_EQ(o.code, 1) << o.err;
  const auto doc = nlohmann::json::parse(o.out);
  std::set<std::string> attributes;
  std::set<std::string> ids;
  for (const auto& f : doc.at("findings")) {
    if (f.at("severity") == "error") {
      attributes.insert(f.at("attribute").get<std::string>());
      ids.insert(f.at("id").get<std::string>());
    }
  }
  EXPECT_EQ(attributes, (std::set<std::string>{"rq_psn", "path_mtu", "sgid_index"}));
  EXPECT_EQ(ids, (std::set<std::string>{"psn-mismatch", "mtu-mismatch", "gid-type-mismatch"}));
  EXPECT_EQ(doc.at("summary").at("errors"), 3);
  EXPECT_EQ(doc.at("summary").at("exit_code"), 1);
  EXPECT_EQ(doc.at("local").at("plan"), "given");
  const auto& first = doc.at("findings").at(0);
  for (const char* key :
       {"id", "severity", "unchecked", "transports", "attribute", "direction", "qp_index",
        "more_qps", "local_value", "remote_value", "message", "fix"}) {
    EXPECT_TRUE(first.contains(key)) << key;
  }
}

TEST(QpValidate, CleanPairJsonHasNoFindings) {
  const Outcome o = RunCli({"-j", Data("rc_clean_a.json"), Data("rc_clean_b.json")});
  ASSERT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(o.out);
  EXPECT_TRUE(doc.at("findings").empty());
  EXPECT_EQ(doc.at("local").at("plan"), "derived");
  EXPECT_EQ(doc.at("schema_version"), 1);
  EXPECT_EQ(doc.at("remote").at("num_qps"), 2);
}

TEST(QpValidate, ReadsOneFileFromStandardInput) {
  const Outcome o =
      RunCli({Data("rc_broken_a.dump.json"), "-"}, ReadFile(Data("rc_broken_b.dump.json")));
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.out.find("<stdin>"), std::string::npos) << o.out;
}

TEST(QpValidate, RefusesStandardInputTwice) {
  const Outcome o = RunCli({"-", "-"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("once"), std::string::npos) << o.err;
}

TEST(QpValidate, ChecksADumpAgainstItsRecordedPeer) {
  EXPECT_EQ(RunCli({Data("rc_clean_a.dump.json")}).code, 0);
  const Outcome o = RunCli({Data("rc_broken_a.dump.json")});
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_NE(o.out.find("psn-mismatch"), std::string::npos) << o.out;
}

TEST(QpValidate, FlagsADumpThatAppliesAnotherPkeyIndexThanItPublished) {
  // Published: P_Key 0x8001 at index 1; applied (the plan): index 0.
  const Outcome o = RunCli({Data("rc_pkey_index_a.dump.json")});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  for (const char* s : {"pkey-index-not-published  pkey_index", "applied 0, published 1",
                        "could not check: the local QPs apply pkey_index 0"}) {
    EXPECT_NE(o.out.find(s), std::string::npos) << s << "\n" << o.out;
  }
}

TEST(QpValidate, RefusesASingleEndpointWithoutPeer) {
  const Outcome o = RunCli({Data("rc_clean_a.json")});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("rc_clean_a.json"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("no peer"), std::string::npos) << o.err;
}

TEST(QpValidate, NotesARecordedPeerThatDiffersFromTheOtherFile) {
  const Outcome o = RunCli({Data("rc_clean_a.json"), Data("rc_broken_b.dump.json")});
  EXPECT_NE(o.out.find("note: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("recorded a different peer"), std::string::npos) << o.out;
}

TEST(QpValidate, TransportOverrideDropsConnectedOnlyRules) {
  const Outcome o =
      RunCli({"--transport", "ud", Data("rc_broken_a.dump.json"), Data("rc_broken_b.dump.json")});
  EXPECT_EQ(o.code, 1) << o.out;  // the GID type mix still breaks UD
  EXPECT_EQ(o.out.find("psn-mismatch"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("mtu-mismatch"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("gid-type-mismatch"), std::string::npos) << o.out;
}

TEST(QpValidate, MissingFileExitsTwoNamingIt) {
  const Outcome o = RunCli({Data("rc_clean_a.json"), Data("no_such_file.json")});
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_NE(o.err.find("no_such_file.json"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cannot open"), std::string::npos) << o.err;
}

TEST(QpValidate, MalformedJsonExitsTwoNamingFileAndProblem) {
  const Outcome o = RunCli({Data("bad_truncated.json"), Data("rc_clean_b.json")});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("bad_truncated.json"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("JSON"), std::string::npos) << o.err;
}

// Every byte of `s` is printable ASCII or a newline.
bool PrintableLines(const std::string& s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c != '\n' && (u < 0x20 || u >= 0x7f)) return false;
  }
  return true;
}

TEST(QpValidate, ParseErrorsNameFileLineColumnAndFieldPath) {
  // The text ends inside "port" (66 bytes, no newline).
  const Outcome o = RunCli({Data("bad_truncated.json"), Data("rc_clean_b.json")});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err, "qp-validate: " + Data("bad_truncated.json") +
                       ": line 1, column 67: port: not valid JSON: syntax error while parsing "
                       "object - unexpected end of input; expected '}'\n");

  // A doubled comma on line 73 of a dump, inside its first QP.
  std::string dump = ReadFile(Data("rc_clean_a.dump.json"));
  const size_t qpn = dump.find("\"qpn\": 17,");
  ASSERT_NE(qpn, std::string::npos);
  dump.insert(qpn + std::string("\"qpn\": 17,").size(), ",");
  const Outcome c = RunCli({"-"}, dump);
  EXPECT_EQ(c.code, 2);
  EXPECT_EQ(c.err.rfind("qp-validate: <stdin>: line 73, column 16: local.endpoint.qps[0]: not "
                        "valid JSON: ",
                        0),
            0u)
      << c.err;
}

TEST(QpValidate, ParseErrorsCarryNoStrayBytes) {
  // Protobuf's parser said "Closing quote expected in string.??^" here.
  const Outcome o = RunCli({"-"}, "{\"version\": 1,\n \"identity\": {\"host\": \"a\xc3\xff\"}}\n");
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(PrintableLines(o.err)) << o.err;
  EXPECT_NE(o.err.find("<stdin>: line 2, column "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("identity.host: not valid JSON"), std::string::npos) << o.err;
  // ... and ": Root element must be a message." for a document that is no object.
  const Outcome a = RunCli({"-"}, "[1, 2]\n");
  EXPECT_EQ(a.code, 2);
  EXPECT_EQ(a.err,
            "qp-validate: <stdin>: line 1, column 1: the document is an array, not an "
            "object\n");
}

TEST(QpValidate, BooleansAreStrict) {
  const std::string dump = ReadFile(Data("rc_clean_a.dump.json"));
  const std::string active = "\"active\": true";
  ASSERT_NE(dump.find(active), std::string::npos);
  for (const char* bad : {"\"yes\"", "\"t\""}) {
    std::string text = dump;
    text.replace(text.find(active), active.size(), "\"active\": " + std::string(bad));
    const Outcome o = RunCli({"-"}, text);
    EXPECT_EQ(o.code, 2) << bad << "\n" << o.out;
    EXPECT_EQ(o.err,
              "qp-validate: <stdin>: line 14, column 15: local.endpoint.port.active must "
              "be true or false, not the string " +
                  std::string(bad) + "\n");
  }
}

TEST(QpValidate, ValueErrorsNameTheirLineToo) {
  std::string dump = ReadFile(Data("rc_clean_a.dump.json"));
  const std::string psn = "\"psn\": 1122867";
  ASSERT_NE(dump.find(psn), std::string::npos);
  dump.replace(dump.find(psn), psn.size(), "\"psn\": 16777216");
  const Outcome o = RunCli({"-"}, dump);
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err,
            "qp-validate: <stdin>: line 78, column 13: local.endpoint.qps[1].psn 0x1000000 "
            "exceeds 24 bits\n");
}

TEST(QpValidate, NewerWireVersionExitsTwo) {
  const Outcome o = RunCli({Data("rc_clean_a.json"), Data("bad_newer_version.json")});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("bad_newer_version.json"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("version 7"), std::string::npos) << o.err;
}

TEST(QpValidate, EmptyInputExitsTwo) {
  const Outcome o = RunCli({Data("rc_clean_a.json"), "-"}, "\n");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("<stdin>: is empty"), std::string::npos) << o.err;
}

TEST(QpValidate, BadCommandLinesExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"a.json", "b.json", "c.json"},
      {"--transport", "xrc", "a.json", "b.json"},
      {"--frobnicate", "a.json", "b.json"},
      {"--transport"},
      {"--markdown", "a.json", "b.json"},
      {"--list-rules", "--json", "--markdown"},
  };
  for (const auto& args : bad) {
    const Outcome o = RunCli(args);
    EXPECT_EQ(o.code, 2) << testing::PrintToString(args);
    EXPECT_NE(o.err.find("qp-validate: "), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("--help"), std::string::npos) << o.err;
  }
}

TEST(QpValidate, HelpExitsZero) {
  const Outcome o = RunCli({"--help"});
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("Usage: qp-validate"), std::string::npos);
  EXPECT_NE(o.out.find("Exit status"), std::string::npos);
}

TEST(QpValidate, ListsEveryRuleAsTextAndJson) {
  const Outcome text = RunCli({"--list-rules"});
  ASSERT_EQ(text.code, 0);
  const Outcome json = RunCli({"--list-rules", "--json"});
  ASSERT_EQ(json.code, 0);
  const auto doc = nlohmann::json::parse(json.out);
  // The validator's rules, then the live rules (snapshot_mode.h).
  ASSERT_EQ(doc.at("rules").size(), RuleCatalogue().size() + LiveRuleCatalogue().size());
  for (const RuleInfo& r : AllRules()) {
    EXPECT_NE(text.out.find(std::string(r.id) + " "), std::string::npos) << r.id;
  }
}

TEST(QpValidate, DocsRulesMdContainsTheGeneratedCatalogue) {
  const std::string docs = ReadFile(std::string(QPC_SOURCE_DIR) + "/docs/rules.md");
  const Outcome md = RunCli({"--list-rules", "--markdown"});
  ASSERT_EQ(md.code, 0);
  EXPECT_EQ(md.out, RulesMarkdown());
  EXPECT_NE(docs.find(md.out), std::string::npos)
      << "docs/rules.md is out of date: regenerate its catalogue section with "
         "`qp-validate --list-rules --markdown`";
}

TEST(QpValidate, VersionNamesToolProjectAndWireFormat) {
  ExpectVersionContract("qp-validate", [](const std::vector<std::string>& args, std::ostream& out,
                                          std::ostream& err) {
    return qp_validate::Run(args, out, err);  // not testing::Test::Run
  });
}

}  // namespace
}  // namespace qpconnect::tools::qp_validate
