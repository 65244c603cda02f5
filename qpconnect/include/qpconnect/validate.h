// SPDX-License-Identifier: MIT
// The validator: every matching rule for connecting two QPs by hand, checked
// before ibv_modify_qp, on plain values (no device needed).
//
// Validate() judges a pair of endpoint descriptions and the attributes each
// side is about to apply (its ConnectionPlan), and returns every finding. The
// rules are the matching rules for UD, UC and RC (P_Key, PSN, QPN, path MTU,
// RDMA read/atomic depth, address vector, GID, Q_Key), the RoCE addressing
// rules, and sanity checks of each side against its own port and device. Each
// rule has a stable id; RuleCatalogue() lists them with their metadata and
// docs/rules.md explains each one. Rule code lives in
// qpconnect/src/validate/rules_<family>.cc.
//
// Cost is O(N) in the number of QPs (plus the GID table sizes): port-level
// problems are reported once, identical per-QP findings are merged (see
// Finding::more_qps) and distinct per-QP findings of one rule are listed up to
// ValidateOptions::max_listed_per_rule, then summarized.
//
// Thread-safety: pure functions; the catalogue is immutable static data.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/path_record.h"
#include "qpconnect/plan.h"
#include "qpconnect/roce_path.h"

namespace qpconnect {

struct ValidationInput {
  const EndpointInfo* local = nullptr;   // REQUIRED: not null
  const EndpointInfo* remote = nullptr;  // REQUIRED: not null
  // The attributes each side applies (entry i connects its QP i to the peer's
  // QP i). When absent, the plan is derived with PlanConnection(side, peer) and
  // default PlanOptions; plan-only facts (the UD message size) are then
  // reported as unchecked.
  std::optional<ConnectionPlan> local_plan;
  std::optional<ConnectionPlan> remote_plan;
};

struct ValidateOptions {
  // Distinct per-QP findings of one rule and direction listed before the rest
  // are summarized in one finding. 0 means no cap.
  size_t max_listed_per_rule = 16;
};

// Returns every finding for the pair, errors first, then warnings, then info;
// within a severity in rule-family order. Rules that compare the two sides are
// checked in both directions (local->remote and remote->local). Rules whose
// facts are unknown on a side report an unchecked kInfo finding instead.
// REQUIRES: input.local != nullptr && input.remote != nullptr.
std::vector<Finding> Validate(const ValidationInput& input, const ValidateOptions& options = {});

// Validate(), plus the rules against the subnet administrator's view
// (rules_sa.cc: mtu-above-sa-path, sl-not-sa-path, pkey-not-sa-path,
// grh-missing-across-routers): the local plan judged against `sa_path`, the
// SA's PathRecord from the local port to the remote one
// (qpconnect/sa/path_resolver.h). Those rules apply to InfiniBand ports only;
// Validate() without a PathRecord never raises them.
// REQUIRES: input.local != nullptr && input.remote != nullptr.
std::vector<Finding> Validate(const ValidationInput& input, const PathRecord& sa_path,
                              const ValidateOptions& options = {});

// Validate(), plus the rules on the kernel's facts of the local side's RoCE
// path to the remote GID (rules_path.cc: route-missing, route-other-netdev,
// neighbour-failed, neighbour-mac-mismatch, vlan-mismatch,
// mtu-above-netdev), read by the local connector before RTR (roce_path.h).
// Those rules apply to Ethernet ports only; Validate() without the facts
// never raises them.
// REQUIRES: input.local != nullptr && input.remote != nullptr.
std::vector<Finding> Validate(const ValidationInput& input, const RocePathFacts& roce_path,
                              const ValidateOptions& options = {});

// Metadata of one rule, as documented in docs/rules.md.
struct RuleInfo {
  std::string_view id;         // stable kebab-case id
  Severity severity;           // severity of a violation (unchecked findings are kInfo)
  TransportSet transports;     // transports it applies to
  std::string_view attribute;  // main attribute in verbs terms
  std::string_view family;     // rule file: qpconnect/src/validate/rules_<family>.cc
  std::string_view checks;     // what it checks
  std::string_view symptom;    // what users see when it is violated
  std::string_view source;     // seed, IBA section, man page, peer issue
};

// Every rule, in family order. Ids are unique.
std::span<const RuleInfo> RuleCatalogue();

// The rule with `id`; nullptr if there is none.
const RuleInfo* FindRule(std::string_view id);

}  // namespace qpconnect
