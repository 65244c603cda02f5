// SPDX-License-Identifier: MIT
// The live rule catalogue (live_catalogue.h), tested as the validator's is:
// ids unique, kebab-case and distinct from the validator's; every entry
// complete, named in its rule file and documented in docs/rules.md; every rule
// raised, alone, by its fixture in live_fixtures.h.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "live_fixtures.h"
#include "qpconnect/observe/live_judge.h"
#include "qpconnect/validate.h"

namespace qpconnect::test {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::filesystem::path(QPC_SOURCE_DIR) / relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(LiveRuleCatalogue, IdsAreUniqueKebabCaseAndNotTheValidators) {
  const std::regex kebab("[a-z0-9]+(-[a-z0-9]+)*");
  std::set<std::string> ids;
  for (const RuleInfo& r : LiveRuleCatalogue()) {
    const std::string id(r.id);
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    EXPECT_TRUE(std::regex_match(id, kebab)) << id;
    EXPECT_EQ(FindRule(id), nullptr) << id << " is also a validator rule";
  }
}

TEST(LiveRuleCatalogue, EveryEntryIsCompleteAndNamedInItsRuleFile) {
  const std::string rules = ReadSource("qpconnect/src/observe/live_judge.cc");
  for (const RuleInfo& r : LiveRuleCatalogue()) {
    SCOPED_TRACE(std::string(r.id));
    EXPECT_NE(r.severity, Severity::kInfo);
    EXPECT_FALSE(r.transports.empty());
    EXPECT_FALSE(r.transports.Has(Transport::kUd));
    EXPECT_FALSE(r.attribute.empty());
    EXPECT_EQ(r.family, "live");
    EXPECT_FALSE(r.checks.empty());
    EXPECT_FALSE(r.symptom.empty());
    EXPECT_FALSE(r.source.empty());
    EXPECT_EQ(FindLiveRule(r.id), &r);
    EXPECT_NE(rules.find(std::string(r.id)), std::string::npos)
        << r.id << " is not named in live_judge.cc";
  }
  EXPECT_EQ(FindLiveRule("psn-mismatch"), nullptr);
}

TEST(LiveRuleCatalogue, EveryRuleIsDocumented) {
  const std::string docs = ReadSource("docs/rules.md");
  ASSERT_FALSE(docs.empty()) << "docs/rules.md missing";
  for (const RuleInfo& r : LiveRuleCatalogue()) {
    EXPECT_NE(docs.find("### `" + std::string(r.id) + "`"), std::string::npos)
        << r.id << " has no entry in docs/rules.md";
  }
}

TEST(LiveRuleCatalogue, EveryRuleHasAViolatingFixture) {
  for (const RuleInfo& r : LiveRuleCatalogue()) {
    EXPECT_TRUE(LiveViolations().count(std::string(r.id))) << "no fixture for " << r.id;
  }
  for (const auto& [id, make] : LiveViolations()) EXPECT_NE(FindLiveRule(id), nullptr) << id;
}

TEST(JudgeLive, EachFixtureRaisesExactlyItsRule) {
  for (const RuleInfo& r : LiveRuleCatalogue()) {
    const std::string id(r.id);
    auto it = LiveViolations().find(id);
    if (it == LiveViolations().end()) continue;  // reported above
    SCOPED_TRACE(id);
    const LiveReport report = JudgeAll(it->second());
    EXPECT_EQ(LiveProblems(report), std::set<std::string>{id}) << LiveDump(report);
    for (const LiveFinding& f : report.findings) {
      if (f.finding.id != id) continue;
      EXPECT_EQ(f.finding.severity, r.severity);
      EXPECT_EQ(f.finding.transports, r.transports);
      EXPECT_EQ(f.finding.attribute, r.attribute);
      EXPECT_FALSE(f.finding.message.empty());
      EXPECT_FALSE(f.finding.fix.empty());
      EXPECT_FALSE(f.finding.local_value.empty());
      EXPECT_FALSE(f.evidence.empty());
    }
  }
}

}  // namespace
}  // namespace qpconnect::test
