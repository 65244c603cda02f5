// SPDX-License-Identifier: MIT
// Validate(): builds the two side views, runs every rule family, and collects
// the findings (merging, capping and ordering them).
#include "qpconnect/validate.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "rules.h"

namespace qpconnect {
namespace validate_internal {
namespace {

uint16_t LmcMask(uint8_t lmc) {
  if (lmc >= 16) return 0xffff;
  return static_cast<uint16_t>((1u << lmc) - 1u);
}

size_t DirIndex(Direction d) { return static_cast<size_t>(d); }

}  // namespace

void SideView::Index() {
  by_index_.fill(nullptr);
  sorted_gids_.clear();
  sorted_gids_.reserve(ep->gid_table.size());
  for (const GidEntry& e : ep->gid_table) {
    if (e.index < by_index_.size() && by_index_[e.index] == nullptr) by_index_[e.index] = &e;
    sorted_gids_.push_back(e.gid);
  }
  std::sort(sorted_gids_.begin(), sorted_gids_.end());
}

const GidEntry* SideView::SgidEntry(uint16_t sgid_index) const {
  if (TableKnown()) {
    if (sgid_index < by_index_.size()) return by_index_[sgid_index];
    for (const GidEntry& e : ep->gid_table) {
      if (e.index == sgid_index) return &e;
    }
    return nullptr;
  }
  if (ep->path.sgid && ep->path.sgid->index == sgid_index) return &*ep->path.sgid;
  return nullptr;
}

bool SideView::HasGid(const Gid& gid) const {
  return std::binary_search(sorted_gids_.begin(), sorted_gids_.end(), gid);
}

bool SideView::IsEthernet() const {
  if (ep->port.link_layer == LinkLayer::kEthernet) return true;
  if (ep->port.link_layer != LinkLayer::kUnspecified || !ep->path.sgid) return false;
  const GidType t = ep->path.sgid->type;
  return t == GidType::kRoceV1 || t == GidType::kRoceV2;
}

std::optional<uint64_t> SideView::SubnetPrefix() const {
  if (ep->port.subnet_prefix != 0) return ep->port.subnet_prefix;
  if (ep->path.sgid && !IsZeroGid(ep->path.sgid->gid)) return GidSubnetPrefix(ep->path.sgid->gid);
  return std::nullopt;
}

bool SideView::OwnsLid(uint16_t lid) const {
  const uint32_t base = ep->port.lid;
  return lid >= base && lid <= base + LmcMask(ep->port.lmc);
}

uint16_t SideView::SourceLid(uint8_t src_path_bits) const {
  return static_cast<uint16_t>(ep->port.lid | (src_path_bits & LmcMask(ep->port.lmc)));
}

FindingSink::FindingSink(const Context& ctx, size_t max_listed_per_rule)
    : ctx_(ctx), cap_(max_listed_per_rule) {}

void FindingSink::Add(Rule rule, const SideView& x, Report report) {
  if (!ctx_.Applies(rule)) return;
  std::string local_value = std::move(report.x_value);
  std::string remote_value = std::move(report.y_value);
  if (x.dir == Direction::kRemote) std::swap(local_value, remote_value);
  Emit(rule, Meta(rule).severity, false, x.dir, std::move(report), std::move(local_value),
       std::move(remote_value));
}

void FindingSink::AddPair(Rule rule, Report report) {
  if (!ctx_.Applies(rule)) return;
  std::string local_value = std::move(report.x_value);
  std::string remote_value = std::move(report.y_value);
  Emit(rule, Meta(rule).severity, false, Direction::kBoth, std::move(report),
       std::move(local_value), std::move(remote_value));
}

void FindingSink::Unchecked(Rule rule, Direction dir, std::string message,
                            std::string_view attribute) {
  if (!ctx_.Applies(rule)) return;
  Report r;
  r.message = "could not check: " + message;
  r.attribute = attribute;
  Emit(rule, Severity::kInfo, true, dir, std::move(r), {}, {});
}

void FindingSink::Emit(Rule rule, Severity severity, bool unchecked, Direction dir, Report report,
                       std::string local_value, std::string remote_value) {
  const RuleInfo& meta = Meta(rule);
  const std::string_view attribute = report.attribute.empty() ? meta.attribute : report.attribute;

  // Findings that differ only in the QP they concern are merged.
  std::string key;
  key.reserve(64 + local_value.size() + remote_value.size() + report.message.size());
  key += std::to_string(static_cast<unsigned>(rule));
  key += '\x1f';
  key += static_cast<char>('0' + static_cast<int>(severity) * 4 + static_cast<int>(dir));
  key += attribute;
  key += '\x1f';
  key += local_value;
  key += '\x1f';
  key += remote_value;
  key += '\x1f';
  key += report.message;
  key += '\x1f';
  key += report.fix;
  if (auto it = seen_.find(key); it != seen_.end()) {
    // Only per-QP findings count the QPs they stand for; a repeated side- or
    // port-level finding (e.g. "could not check") is simply dropped.
    if (report.qp) ++findings_[it->second].more_qps;
    return;
  }
  const size_t r = static_cast<size_t>(rule);
  const size_t d = DirIndex(dir);
  if (report.qp) {
    if (cap_ != 0 && listed_[r][d] >= cap_) {
      ++overflow_[r][d];
      return;
    }
    ++listed_[r][d];
  }

  Finding f;
  f.id = std::string(meta.id);
  f.severity = severity;
  f.unchecked = unchecked;
  f.transports = meta.transports;
  f.attribute = std::string(attribute);
  f.direction = dir;
  if (report.qp) f.qp_index = static_cast<uint32_t>(*report.qp);
  f.local_value = std::move(local_value);
  f.remote_value = std::move(remote_value);
  f.message = std::move(report.message);
  f.fix = std::move(report.fix);
  seen_.emplace(std::move(key), findings_.size());
  findings_.push_back(std::move(f));
}

std::vector<Finding> FindingSink::Take() {
  for (size_t r = 0; r < kRuleCount; ++r) {
    for (size_t d = 0; d < 3; ++d) {
      if (overflow_[r][d] == 0) continue;
      // Summarize after the last listed finding of this rule and direction.
      const RuleInfo& meta = Meta(static_cast<Rule>(r));
      Finding f;
      f.id = std::string(meta.id);
      f.severity = meta.severity;
      f.transports = meta.transports;
      f.attribute = std::string(meta.attribute);
      f.direction = static_cast<Direction>(d);
      f.more_qps = overflow_[r][d];
      for (const Finding& listed : findings_) {
        if (listed.id == f.id && listed.direction == f.direction && listed.qp_index) {
          f.severity = listed.severity;
          f.attribute = listed.attribute;
          f.fix = listed.fix;
        }
      }
      f.message = std::to_string(overflow_[r][d]) +
                  " more QPs fail this check with other values (first " +
                  std::to_string(listed_[r][d]) + " listed)";
      findings_.push_back(std::move(f));
    }
  }
  std::stable_sort(findings_.begin(), findings_.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  seen_.clear();
  return std::move(findings_);
}

}  // namespace validate_internal

namespace {

// The same path seen from its destination.
PathRecord ReversedPath(PathRecord p) {
  std::swap(p.dlid, p.slid);
  std::swap(p.dgid, p.sgid);
  return p;
}

std::vector<Finding> Judge(const ValidationInput& input, const PathRecord* sa_path,
                           const RocePathFacts* roce_path, const ValidateOptions& options) {
  using namespace validate_internal;
  assert(input.local != nullptr && input.remote != nullptr);

  // A side that takes its path from the SA (path_from_sa) plans with the
  // SA's record; the remote with the same path seen from its end (a
  // PathRecord is reversible: same MTU, SL, rate and lifetime).
  PlanOptions local_options;
  PlanOptions remote_options;
  if (sa_path != nullptr) {
    if (input.local->path.path_from_sa) local_options.sa_path = *sa_path;
    if (input.remote->path.path_from_sa) remote_options.sa_path = ReversedPath(*sa_path);
  }
  std::optional<ConnectionPlan> derived_local;
  std::optional<ConnectionPlan> derived_remote;
  if (!input.local_plan) {
    derived_local = PlanConnection(*input.local, *input.remote, local_options);
  }
  if (!input.remote_plan) {
    derived_remote = PlanConnection(*input.remote, *input.local, remote_options);
  }

  Context ctx;
  ctx.transport = input.local->transport;
  ctx.local.ep = input.local;
  ctx.local.plan = input.local_plan ? &*input.local_plan : &*derived_local;
  ctx.local.plan_derived = !input.local_plan;
  ctx.local.dir = Direction::kLocal;
  ctx.local.name = "local";
  ctx.remote.ep = input.remote;
  ctx.remote.plan = input.remote_plan ? &*input.remote_plan : &*derived_remote;
  ctx.remote.plan_derived = !input.remote_plan;
  ctx.remote.dir = Direction::kRemote;
  ctx.remote.name = "remote";
  ctx.local.Index();
  ctx.remote.Index();
  ctx.sa_path = sa_path;
  ctx.roce_path = roce_path;
  ctx.n = std::min({input.local->qps.size(), input.remote->qps.size(), ctx.local.plan->qps.size(),
                    ctx.remote.plan->qps.size()});

  FindingSink sink(ctx, options.max_listed_per_rule);
  CheckLocalRules(ctx, sink);
  CheckPkeyRules(ctx, sink);
  CheckPsnQpnRules(ctx, sink);
  CheckMtuRules(ctx, sink);
  CheckRdAtomicRules(ctx, sink);
  CheckAddressRules(ctx, sink);
  CheckRoceRules(ctx, sink);
  CheckQkeyRules(ctx, sink);
  CheckSaRules(ctx, sink);
  CheckPathRules(ctx, sink);
  return sink.Take();
}

}  // namespace

std::vector<Finding> Validate(const ValidationInput& input, const ValidateOptions& options) {
  return Judge(input, nullptr, nullptr, options);
}

std::vector<Finding> Validate(const ValidationInput& input, const PathRecord& sa_path,
                              const ValidateOptions& options) {
  return Judge(input, &sa_path, nullptr, options);
}

std::vector<Finding> Validate(const ValidationInput& input, const RocePathFacts& roce_path,
                              const ValidateOptions& options) {
  return Judge(input, nullptr, &roce_path, options);
}

}  // namespace qpconnect
