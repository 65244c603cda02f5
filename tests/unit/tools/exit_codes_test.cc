// SPDX-License-Identifier: MIT
// The error -> exit status map (tools/common/exit_codes.h) is the one source
// of the tools' statuses: every status it gives is one docs/cli.md documents,
// docs/cli.md's table lists exactly the statuses of ExitCode, each (stage,
// error code) has one status, and no tool maps error codes to statuses
// itself. The cells the tools relied on before the map are pinned here.
#include "exit_codes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace qpconnect::tools {
namespace {

const std::string kSourceDir = QPC_SOURCE_DIR;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// docs/cli.md's table "| status | meaning |" as the table would write it.
std::string TableMarkdown() {
  std::string t = "| status | meaning |\n|---|---|\n";
  for (const ExitStatusRow& r : kExitStatuses) {
    t += "| " + std::to_string(r.status) + " | " + std::string(r.meaning) + " |\n";
  }
  return t;
}

// The rows of docs/cli.md's table "| status | meaning |", as written.
std::string DocumentedTable() {
  std::istringstream doc(ReadFile(kSourceDir + "/docs/cli.md"));
  std::string table, line;
  bool in_table = false;
  while (std::getline(doc, line)) {
    if (line == "| status | meaning |") in_table = true;
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    table += line + "\n";
  }
  return table;
}

// The statuses of docs/cli.md's table "| status | meaning |".
std::vector<int> DocumentedStatuses() {
  std::istringstream doc(ReadFile(kSourceDir + "/docs/cli.md"));
  std::vector<int> statuses;
  std::string line;
  bool in_table = false;
  const std::regex row(R"(^\| ([0-9]+) \| .+\|$)");
  while (std::getline(doc, line)) {
    if (line == "| status | meaning |") {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|---", 0) == 0) continue;
    std::smatch m;
    if (!std::regex_match(line, m, row)) break;
    statuses.push_back(std::stoi(m[1]));
  }
  return statuses;
}

Error Err(ErrorCode code, std::string attribute = "", std::string operation = "op") {
  return Error(code, 0, std::move(operation), std::move(attribute), "detail");
}

TEST(ExitCodes, CliDocTableIsTheTable) {
  std::vector<int> want;
  for (const ExitStatusRow& r : kExitStatuses) want.push_back(r.status);
  EXPECT_EQ(DocumentedStatuses(), want) << "docs/cli.md's exit status table and "
                                           "tools/common/exit_codes.h disagree";
  EXPECT_EQ(DocumentedTable(), TableMarkdown())
      << "docs/cli.md's exit status table is not kExitStatuses (tools/common/exit_codes.h); "
         "paste the expected table above in its place";
}

// The table's words fit the --help line and the man page that copies it.
TEST(ExitCodes, EveryMeaningIsOnePlainLine) {
  std::set<int> seen;
  int previous = -1;
  for (const ExitStatusRow& r : kExitStatuses) {
    EXPECT_TRUE(seen.insert(r.status).second) << r.status << " twice";
    EXPECT_GT(r.status, previous) << "the table is in order";
    previous = r.status;
    EXPECT_FALSE(r.meaning.empty());
    EXPECT_LE(r.meaning.size(), 72u) << r.meaning;
    for (char c : r.meaning) {
      EXPECT_TRUE(c >= ' ' && c <= '~' && c != '"' && c != '\'' && c != '\\')
          << "'" << c << "' in: " << r.meaning;
    }
  }
  EXPECT_EQ(ExitMeaning(143), "interrupted by SIGTERM (128 + 15)");
  EXPECT_EQ(ExitMeaning(11), "");
}

TEST(ExitCodes, HelpSectionIsTheTablesLines) {
  constexpr ExitCode used[] = {kExitOk, kExitUsage, kExitNotFound};
  EXPECT_EQ(ExitStatusHelp(used),
            "Exit status:\n"
            "  0    success\n"
            "  2    usage: a bad option or argument, or an unusable input the user named\n"
            "  127  PROGRAM was not found\n");
}

TEST(ExitCodes, EveryCellIsADocumentedStatusAndEveryFailureStatusIsReached) {
  const std::vector<int> documented = DocumentedStatuses();
  const std::set<int> docs(documented.begin(), documented.end());
  std::set<int> reached;
  for (size_t stage = 0; stage < kExitStages; ++stage) {
    for (size_t code = 0; code < kErrorCodes; ++code) {
      const int status =
          ExitStatus(static_cast<ExitStage>(stage), Err(static_cast<ErrorCode>(code)));
      EXPECT_EQ(status, kExitTable[stage][code]) << "stage " << stage << " code " << code;
      EXPECT_TRUE(docs.count(status)) << status << " is not in docs/cli.md";
      EXPECT_NE(status, kExitOk) << "an error never exits 0";
      reached.insert(status);
    }
  }
  // The attribute rules of kPath reach 8; 0, 1 and 126 and up are no error's.
  reached.insert(ExitStatus(ExitStage::kPath, Err(ErrorCode::kNotFound, "path")));
  for (int s : docs) {
    // No error's: success, qp-validate's verdict, the launchers' exec and
    // the signals that stop qp-connect --serve.
    if (s == kExitOk || s == kExitFindings || s >= kExitCannotRun) continue;
    EXPECT_TRUE(reached.count(s)) << "documented status " << s << " comes from no error";
  }
}

TEST(ExitCodes, OneRowPerStageOneColumnPerErrorCode) {
  EXPECT_EQ(kExitTable.size(), kExitStages);
  EXPECT_EQ(kExitTable[0].size(), kErrorCodes);
  EXPECT_STREQ(ErrorCodeName(static_cast<ErrorCode>(kErrorCodes - 1)), "traffic")
      << "a new ErrorCode needs its column in kExitTable";
}

// What each tool returned before the map (9b44bd1), one row a case.
struct Before {
  ExitStage stage;
  ErrorCode code;
  const char* attribute;
  const char* operation;
  ExitCode status;
  const char* was;  // where the old mapping stood
};
using enum ErrorCode;
using Stage = ExitStage;
constexpr Before kBefore[] = {
    // qp-connect: past the open and the channel, the stage decides.
    {Stage::kExchange, kTimeout, "", "op", kExitExchange, "run.cc FailConnect"},
    {Stage::kExchange, kNotFound, "", "op", kExitExchange, "run.cc FailConnect"},
    {Stage::kTraffic, kTimeout, "", "op", kExitTraffic, "run.cc traffic"},
    {Stage::kBarrier, kTimeout, "", "op", kExitExchange, "run.cc barriers"},
    {Stage::kConnect, kInvalidArgument, "", "op", kExitVerbs, "run.cc FailConnect"},
    {Stage::kValidate, kIncompatible, "", "validate", kExitValidation, "run.cc FailConnect"},
    {Stage::kInput, kIo, "", "op", kExitUsage, "run.cc preflight, key, dump"},
    // Opening: a bad value, a missing thing, a verbs call apart; the rest 6.
    {Stage::kOpen, kInvalidArgument, "", "op", kExitUsage, "report.cc ExitFor(e, 6)"},
    {Stage::kOpen, kNotFound, "", "op", kExitNoDevice, "report.cc ExitFor(e, 6)"},
    {Stage::kOpen, kIo, "", "op", kExitVerbs, "report.cc ExitFor(e, 6)"},
    {Stage::kOpen, kIo, "", "allocate buffers", kExitUsage, "preflight.cc ExitForOpen"},
    {Stage::kOpen, kIo, "", "recvmsg", kExitVerbs, "qp-inspect KernelError"},
    // The channel: a missing directory or bind address is the user's (2).
    {Stage::kChannel, kNotFound, "", "op", kExitUsage, "run.cc MakeExchanger"},
    {Stage::kChannel, kIo, "", "op", kExitExchange, "run.cc MakeExchanger"},
    // The pingpong listener kept the open's three apart.
    {Stage::kListen, kNotFound, "", "op", kExitNoDevice, "pingpong_flow.cc ExitFor(e, 4)"},
    {Stage::kListen, kIo, "", "op", kExitExchange, "pingpong_flow.cc ExitFor(e, 4)"},
    // --gen-psk: a write that fails is 4, anything else 2.
    {Stage::kKeyFile, kIo, "", "op", kExitExchange, "run.cc --gen-psk"},
    {Stage::kKeyFile, kNotFound, "", "op", kExitUsage, "run.cc --gen-psk"},
    // The SA's answers.
    {Stage::kPath, kInvalidArgument, "port", "op", kExitUsage, "sa_report.cc ExitForSaError"},
    {Stage::kPath, kNotFound, "port", "op", kExitNoDevice, "sa_report.cc ExitForSaError"},
    {Stage::kPath, kNotFound, "path", "op", kExitNoPath, "sa_report.cc ExitForSaError"},
    {Stage::kPath, kIncompatible, "pkey", "op", kExitNoPath, "sa_report.cc ExitForSaError"},
    {Stage::kPath, kTimeout, "", "op", kExitSa, "sa_report.cc ExitForSaError"},
    // qp-mesh's collective verdict, every code: a timeout is the traffic's.
    {Stage::kWhole, kInvalidArgument, "", "op", kExitUsage, "qp-mesh ExitFor"},
    {Stage::kWhole, kNotFound, "", "op", kExitNoDevice, "qp-mesh ExitFor"},
    {Stage::kWhole, kTimeout, "", "op", kExitTraffic, "qp-mesh ExitFor"},
    {Stage::kWhole, kProtocol, "", "op", kExitExchange, "qp-mesh ExitFor"},
    {Stage::kWhole, kIncompatible, "", "op", kExitValidation, "qp-mesh ExitFor"},
    {Stage::kWhole, kVerbs, "", "op", kExitVerbs, "qp-mesh ExitFor"},
    {Stage::kWhole, kIo, "", "op", kExitExchange, "qp-mesh ExitFor"},
    {Stage::kWhole, kAuth, "", "op", kExitExchange, "qp-mesh ExitFor"},
    {Stage::kWhole, kTraffic, "", "op", kExitTraffic, "qp-mesh ExitFor"},
};

TEST(ExitCodes, StatusesTheToolsGaveBeforeTheMap) {
  for (const Before& b : kBefore) {
    EXPECT_EQ(ExitStatus(b.stage, Err(b.code, b.attribute, b.operation)), b.status)
        << "as " << b.was << " gave for " << ErrorCodeName(b.code) << " " << b.attribute << " "
        << b.operation;
  }
}

// No tool turns an ErrorCode into an exit status itself: a switch case on an
// ErrorCode that returns an exit status ("case ErrorCode::kTimeout: return
// kExitTraffic;"), or a test of an error's code choosing between statuses
// ("e.code == ErrorCode::kIo ? kExitExchange : kExitUsage"), stands only in
// exit_codes.cc.
TEST(ExitCodes, NoToolMapsErrorCodesItself) {
  namespace fs = std::filesystem;
  const std::regex a_case(R"(case ErrorCode::k)");
  const std::regex returns_status(R"(return kExit)");
  const std::regex a_test(R"(code [!=]= ErrorCode::k)");
  const std::regex chooses_status(R"(\?\s*kExit|:\s*kExit)");
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir + "/tools")) {
    const fs::path& p = entry.path();
    if (p.extension() != ".cc" && p.extension() != ".h") continue;
    if (p.filename() == "exit_codes.cc" || p.filename() == "exit_codes.h") continue;
    std::istringstream in(ReadFile(p));
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = 0; i < lines.size(); ++i) {
      bool maps = false;
      if (std::regex_search(lines[i], a_case)) {
        // The case's own line or the two after it return a status.
        for (size_t j = i; j < lines.size() && j < i + 3 && !maps; ++j) {
          maps = std::regex_search(lines[j], returns_status);
        }
      } else if (std::regex_search(lines[i], a_test)) {
        // "if (e.code == ErrorCode::kX) return kExitY;", or a choice between
        // statuses on that line or the next.
        maps = std::regex_search(lines[i], returns_status) ||
               std::regex_search(lines[i], chooses_status) ||
               (i + 1 < lines.size() && std::regex_search(lines[i + 1], chooses_status));
      }
      if (maps) found.push_back(p.string() + ":" + std::to_string(i + 1) + ": " + lines[i]);
    }
  }
  EXPECT_TRUE(found.empty()) << "error codes mapped to exit statuses outside "
                                "tools/common/exit_codes.cc:\n"
                             << [&] {
                                  std::string s;
                                  for (const auto& f : found) s += f + "\n";
                                  return s;
                                }();
}

}  // namespace
}  // namespace qpconnect::tools
