// SPDX-License-Identifier: MIT
// Table-driven tests over the rule catalogue: every rule has a violating
// fixture that raises exactly that id on each transport it applies to, and
// never on the others; the catalogue is well-formed and documented.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "fixtures.h"
#include "qpconnect/validate.h"
#include "violations.h"

namespace qpconnect::test {
namespace {

constexpr Transport kTransports[] = {Transport::kRc, Transport::kUc, Transport::kUd};

TEST(RuleCatalogue, IdsAreUniqueKebabCase) {
  std::set<std::string> ids;
  for (const RuleInfo& r : RuleCatalogue()) {
    const std::string id(r.id);
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    ASSERT_FALSE(id.empty());
    EXPECT_NE(id.front(), '-') << id;
    EXPECT_NE(id.back(), '-') << id;
    for (char c : id) {
      EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) ||
                  std::isdigit(static_cast<unsigned char>(c)) || c == '-')
          << id;
    }
  }
}

TEST(RuleCatalogue, EveryEntryIsComplete) {
  for (const RuleInfo& r : RuleCatalogue()) {
    SCOPED_TRACE(std::string(r.id));
    EXPECT_NE(r.severity, Severity::kInfo);
    EXPECT_FALSE(r.transports.empty());
    EXPECT_FALSE(r.attribute.empty());
    EXPECT_FALSE(r.checks.empty());
    EXPECT_FALSE(r.symptom.empty());
    EXPECT_FALSE(r.source.empty());
    EXPECT_EQ(FindRule(r.id), &r);
  }
  EXPECT_EQ(FindRule("no-such-rule"), nullptr);
}

TEST(RuleCatalogue, EveryFamilyHasItsRuleFile) {
  for (const RuleInfo& r : RuleCatalogue()) {
    const std::filesystem::path file = std::filesystem::path(QPC_SOURCE_DIR) /
                                       "qpconnect/src/validate" /
                                       ("rules_" + std::string(r.family) + ".cc");
    ASSERT_TRUE(std::filesystem::exists(file)) << r.id << ": " << file;
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    // The file's header names the ids it implements.
    EXPECT_NE(text.str().find(std::string(r.id)), std::string::npos)
        << r.id << " is not named in " << file;
  }
}

TEST(RuleCatalogue, EveryRuleIsDocumented) {
  std::ifstream in(std::filesystem::path(QPC_SOURCE_DIR) / "docs/rules.md");
  ASSERT_TRUE(in) << "docs/rules.md missing";
  std::stringstream text;
  text << in.rdbuf();
  for (const RuleInfo& r : RuleCatalogue()) {
    EXPECT_NE(text.str().find("### `" + std::string(r.id) + "`"), std::string::npos)
        << r.id << " has no entry in docs/rules.md";
  }
}

TEST(RuleCatalogue, EveryRuleHasAViolatingFixture) {
  for (const RuleInfo& r : RuleCatalogue()) {
    EXPECT_TRUE(Violations().count(std::string(r.id))) << "no fixture for " << r.id;
  }
  for (const auto& [id, v] : Violations()) EXPECT_NE(FindRule(id), nullptr) << id;
}

TEST(Validate, CleanPairsRaiseNothing) {
  for (Transport t : kTransports) {
    for (const Pair& p : {IbPair(t), RocePair(t), IbPair(t, 3), RocePair(t, 3)}) {
      const auto findings = p.Run();
      EXPECT_TRUE(Problems(findings).empty()) << TransportName(t) << "\n" << Dump(findings);
    }
  }
}

TEST(Validate, CleanPairsWithPlansRaiseNothing) {
  for (Transport t : kTransports) {
    for (Pair p : {IbPair(t), RocePair(t)}) {
      p.WithPlans();
      p.local_plan->message_size = 1024;
      p.remote_plan->message_size = 1024;
      const auto findings = p.Run();
      EXPECT_TRUE(Problems(findings).empty()) << TransportName(t) << "\n" << Dump(findings);
      for (const Finding& f : findings) EXPECT_TRUE(f.unchecked) << FindingToString(f);
    }
  }
}

TEST(Validate, EachFixtureRaisesExactlyItsRuleOnItsTransports) {
  for (const RuleInfo& r : RuleCatalogue()) {
    const std::string id(r.id);
    auto it = Violations().find(id);
    if (it == Violations().end()) continue;  // reported by EveryRuleHasAViolatingFixture
    for (Transport t : kTransports) {
      SCOPED_TRACE(id + " on " + TransportName(t));
      const auto findings = it->second.make(t).Run();
      const std::set<std::string> problems = Problems(findings);
      if (!r.transports.Has(t)) {
        EXPECT_EQ(problems.count(id), 0u) << Dump(findings);
        continue;
      }
      EXPECT_EQ(problems.count(id), 1u) << Dump(findings);
      for (const std::string& other : problems) {
        if (other == id) continue;
        EXPECT_TRUE(it->second.companions.count(other)) << "unexpected " << other << "\n"
                                                        << Dump(findings);
      }
      for (const Finding& f : findings) {
        if (f.id != id || f.unchecked) continue;
        EXPECT_EQ(f.severity, r.severity);
        EXPECT_EQ(f.transports, r.transports);
        EXPECT_FALSE(f.attribute.empty());
        EXPECT_FALSE(f.message.empty());
        EXPECT_FALSE(f.fix.empty());
      }
    }
  }
}

}  // namespace
}  // namespace qpconnect::test
