// SPDX-License-Identifier: MIT
#include "qpconnect/composer.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "phase_clock.h"
#include "qpconnect/gid_recheck.h"
#include "qpconnect/validate.h"

namespace qpconnect {
namespace {

using connector_internal::PhaseClock;

// RoCE: the netdevs behind this side's GID table as the kernel has them,
// published so that the peer compares its neighbour entry and VLAN with them
// (rules_path.cc).
void PublishNetdevs(EndpointInfo& local, verbs::QpEnv& env) {
  if (local.port.link_layer != LinkLayer::kEthernet || !local.netdevs.empty()) return;
  std::vector<std::string> names;
  for (const GidEntry& g : local.gid_table) {
    if (!g.netdev.empty() && std::find(names.begin(), names.end(), g.netdev) == names.end()) {
      names.push_back(g.netdev);
    }
  }
  if (!names.empty()) local.netdevs = env.ReadNetdevs(names);
}

// RoCE: the prefix length of each GID's address on its netdev, published so
// that both sides' joint choice knows which pairs share a subnet
// (address_prefix.h). Entries already carrying one keep it.
void PublishPrefixes(EndpointInfo& local, verbs::QpEnv& env) {
  if (local.port.link_layer != LinkLayer::kEthernet) return;
  std::vector<std::string> names;
  bool unknown = false;
  for (const GidEntry& g : local.gid_table) {
    if (g.type != GidType::kRoceV2 || g.prefix_len != 0) continue;
    unknown = true;
    if (!g.netdev.empty() && std::find(names.begin(), names.end(), g.netdev) == names.end()) {
      names.push_back(g.netdev);
    }
  }
  if (unknown) PublishPrefixLengths(local, env.ReadAddressPrefixes(names));
}

// RoCE v2: the path between the two GIDs in use. nullopt off RoCE v2 (v1 is
// not routed) or without both GIDs.
std::optional<RocePathQuery> PathQuery(const EndpointInfo& local, const EndpointInfo& remote) {
  if (local.port.link_layer != LinkLayer::kEthernet || !local.path.sgid || !remote.path.sgid ||
      local.path.sgid->type != GidType::kRoceV2) {
    return std::nullopt;
  }
  return RocePathQuery{*local.path.sgid, remote.path.sgid->gid};
}

// A side that connects every QP it holds, entry i to the peer's entry i: a
// QP count that differs from the peer's is an error here, where the
// validator only warns (qp-count-mismatch: a plan of min(N, M) entries is
// valid for a caller that connects just those). Both sides see the same two
// counts, so both refuse alike, before anything is modified. The derived
// plan's min(N, M) entries are a consequence, not a second fault: the
// plan-endpoint-mismatch on the QP list is dropped.
void HoldQpCountsEqual(std::vector<Finding>& findings, size_t local_qps, size_t remote_qps) {
  if (local_qps == remote_qps) return;
  std::erase_if(findings, [](const Finding& f) {
    return f.id == "plan-endpoint-mismatch" && f.attribute == "qps";
  });
  for (auto& f : findings) {
    if (f.id != "qp-count-mismatch") continue;
    f.severity = Severity::kError;
    auto qps = [](size_t n) { return std::to_string(n) + (n == 1 ? " QP" : " QPs"); };
    f.message = "this side has " + qps(local_qps) + " and the peer " + qps(remote_qps) +
                ": refused before any modify, as the connector connects every QP";
  }
  // Errors first, as Validate() orders them.
  std::stable_partition(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.severity == Severity::kError; });
}

// A finding of the composer's own (the joint GID choice's, the path facts')
// among the validator's, errors first.
void AddOwnFinding(std::vector<Finding>& findings, std::optional<Finding> f) {
  if (!f) return;
  findings.push_back(std::move(*f));
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
}

// Each QP just connected and its peer, for qp-inspect (peer_registry.h):
// QP i is local.qps[i], its peer the plan's entry i.
void PublishConnected(const Agreement& a, const EndpointInfo& local, const QpSet& qps,
                      verbs::QpEnv& env) {
  const size_t n = std::min({a.plan.qps.size(), local.qps.size(), qps.qps.size()});
  std::vector<PublishedPeer> peers;
  peers.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const QpAttrs& q = a.plan.qps[i];
    PublishedPeer& p = peers.emplace_back();
    p.device = local.identity.device;
    p.port = qps.port;
    p.qpn = local.qps[i].qpn;
    p.peer_host = a.peer_host;
    if (q.ah.is_global && !IsZeroGid(q.ah.dgid)) p.peer_gid = q.ah.dgid;
    p.peer_lid = q.ah.dlid;
    p.peer_qpn = q.dest_qp_num;
  }
  env.PublishPeers(peers);
}

}  // namespace

Result<void> RefuseOnFindings(const std::vector<Finding>& findings) {
  size_t errors = 0;
  std::string first;
  for (const auto& f : findings) {
    if (f.severity != Severity::kError) continue;
    if (errors++ == 0) first = FindingToString(f);
  }
  if (errors == 0) return Ok();
  return Error{ErrorCode::kIncompatible, 0, "validate", "",
               "the validator found " + std::to_string(errors) +
                   (errors == 1 ? " error" : " errors") +
                   "; nothing was modified (first: " + first + ")"};
}

bool IsGidChanged(const Error& e) {
  return e.code == ErrorCode::kIncompatible && e.operation == "validate" &&
         e.attribute == "sgid_index";
}

void Composer::Prepare(EndpointInfo& local) const {
  JoinGidChoice(local);
  PublishNetdevs(local, *env_);
  PublishPrefixes(local, *env_);
}

Result<Agreement> Composer::Agree(EndpointInfo& local, EndpointInfo& remote,
                                  const ComposeOptions& options) const {
  Agreement a;
  a.local_qps = local.qps.size();
  a.remote_qps = remote.qps.size();
  a.connect_every_qp = options.connect_every_qp;
  a.peer_host = remote.identity.host;
  a.gid_pair = ApplyGidPair(local, remote, options.oob_addresses);

  PlanOptions plan_options = options.plan;
  if (options.path_source) {
    PhaseClock clock(a.path_time);
    auto path = options.path_source(local, remote);
    if (!path) return std::move(path).error();
    plan_options.sa_path = *path;
  }
  a.sa_path = plan_options.sa_path;

  {
    // Timed into `a` before it is returned (the clock writes at the scope's end).
    PhaseClock clock(a.validate_time);
    a.plan = PlanConnection(local, remote, plan_options);
    if (options.grh) {
      for (QpAttrs& q : a.plan.qps) q.ah.is_global = *options.grh;
    }
    if (options.read_path) {
      if (auto q = PathQuery(local, remote)) a.roce_path = env_->ReadPath(*q);
    }
    const ValidationInput input{&local, &remote, a.plan, std::nullopt};
    a.findings = a.sa_path     ? Validate(input, *a.sa_path)
                 : a.roce_path ? Validate(input, *a.roce_path)
                               : Validate(input);
    if (options.connect_every_qp) HoldQpCountsEqual(a.findings, a.local_qps, a.remote_qps);
    AddOwnFinding(a.findings, GidPairFinding(*a.gid_pair));
    if (a.roce_path) AddOwnFinding(a.findings, RocePathFinding(*a.roce_path));
  }
  return a;
}

Result<void> Composer::Gate(const Agreement& agreement, bool refuse_on_findings) {
  if (refuse_on_findings) QPC_TRY(RefuseOnFindings(agreement.findings));
  if (agreement.connect_every_qp && (agreement.remote_qps != agreement.local_qps ||
                                     agreement.plan.qps.size() != agreement.local_qps)) {
    return Error{ErrorCode::kIncompatible, 0, "connect", "qps",
                 "this side has " + std::to_string(agreement.local_qps) + " QPs, the peer " +
                     std::to_string(agreement.remote_qps) + " (use the same --qps on both sides)"};
  }
  return Ok();
}

Result<void> Composer::RecheckGid(Agreement& agreement, const EndpointInfo& local,
                                  const QpSet& qps) const {
  if (!local.path.sgid || qps.context == nullptr) return Ok();
  const GidEntry& chosen = *local.path.sgid;
  auto at = env_->ReadGidAt(*qps.context, qps.port, chosen.index);
  if (!at) return std::move(at).error();
  if (*at && at->value().gid == chosen.gid && at->value().type == chosen.type) return Ok();
  // Changed: the whole table, to say where the GID went.
  auto now = env_->ReadGids(*qps.context, qps.port);
  if (!now) return std::move(now).error();
  auto f = CheckGidUnchanged(chosen, *now);
  if (!f) return Ok();  // back in place between the two reads
  const std::string text = FindingToString(*f);
  agreement.findings.insert(agreement.findings.begin(), std::move(*f));
  return Error{ErrorCode::kIncompatible, 0, "validate", "sgid_index",
               "the GID table changed before RTR; nothing was modified (" + text + ")"};
}

Result<void> Composer::Apply(Agreement& agreement, const EndpointInfo& local, const QpSet& qps,
                             Applied& applied, const ApplyHooks& hooks,
                             const std::string& hint) const {
  applied = Applied{};
  if (hooks.before_recheck) hooks.before_recheck();
  QPC_TRY(RecheckGid(agreement, local, qps));
  if (hooks.before_moves) hooks.before_moves();
  std::string why = hint;
  if (why.empty() && HasErrors(agreement.findings)) why = "the validator reported errors above";
  QPC_TRY(verbs::ConnectToPlan(qps.qps, qps.transport, agreement.plan, why, *env_, qps.pd_of,
                               hooks.progress, applied.peer, applied.times));
  PublishConnected(agreement, local, qps, *env_);
  return Ok();
}

}  // namespace qpconnect
