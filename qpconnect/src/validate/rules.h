// SPDX-License-Identifier: MIT
// Private to the validator: the rule enumeration, the view of one side that the
// rule families read, and the sink that turns violations into Findings.
//
// Each rule family lives in rules_<family>.cc and exposes one Check*Rules()
// function; rule_catalogue.cc holds the metadata of every Rule, indexed by the
// enumeration below (same order).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/roce_path.h"
#include "qpconnect/validate.h"

namespace qpconnect::validate_internal {

// One value per catalogue entry, in catalogue order. Never renumber an id's
// meaning: ids are public; the enumeration is not.
enum class Rule : uint16_t {
  // rules_local.cc
  kTransportMismatch,
  kLinkLayerMismatch,
  kPortNotActive,
  kLidZero,
  kPlanEndpointMismatch,
  kRetryCntOutOfRange,
  kRnrRetryOutOfRange,
  kTimeoutOutOfRange,
  kMinRnrTimerOutOfRange,
  kRnrRetryZero,
  kTimeoutInfinite,
  kMinRnrTimerZero,
  // rules_pkey.cc
  kPkeyMismatch,
  kPkeyNoFullMember,
  kPkeyIndexNotPublished,
  // rules_psn_qpn.cc
  kQpListEmpty,
  kQpCountMismatch,
  kQpnOutOfRange,
  kQpnReserved,
  kQpnDuplicate,
  kPsnOutOfRange,
  kQpnMismatch,
  kPsnMismatch,
  // rules_mtu.cc
  kMtuInvalid,
  kMtuMismatch,
  kMtuAboveActive,
  kMtuAbovePeerActive,
  kUdMessageExceedsMtu,
  // rules_rd_atomic.cc
  kRdAtomicExceedsPeer,
  kRdAtomicExceedsDevice,
  kDestRdAtomicExceedsDevice,
  // rules_address.cc
  kAhPortMismatch,
  kDlidNotPeerLid,
  kSlidNotPeerDlid,
  kSrcPathBitsAboveLmc,
  kUdMulticastDestination,
  kSgidIndexNotInTable,
  kSgidIndexTooLarge,
  kSgidZero,
  kDgidZero,
  kDgidNotInPeerTable,
  kLinkLocalAcrossSubnets,
  kHopLimitTooLow,
  kFlowLabelOutOfRange,
  // rules_roce.cc
  kGrhRequired,
  kDlidOnEthernet,
  kGidTypeMismatch,
  kGidFamilyMismatch,
  kTrafficClassMismatch,
  // rules_qkey.cc
  kQkeyMismatch,
  kQkeyControlled,
  // rules_sa.cc
  kMtuAboveSaPath,
  kSlNotSaPath,
  kPkeyNotSaPath,
  kGrhMissingAcrossRouters,
  // rules_path.cc
  kRouteMissing,
  kRouteOtherNetdev,
  kNeighbourFailed,
  kNeighbourMacMismatch,
  kVlanMismatch,
  kMtuAboveNetdev,

  kCount,
};

constexpr size_t kRuleCount = static_cast<size_t>(Rule::kCount);

// Metadata of `rule` (rule_catalogue.cc).
const RuleInfo& Meta(Rule rule);

// One side of the pair as the rules see it: its description, the plan it
// applies, and indexes of its GID table built once.
struct SideView {
  const EndpointInfo* ep = nullptr;
  const ConnectionPlan* plan = nullptr;
  bool plan_derived = false;  // the plan came from PlanConnection(), not the caller
  Direction dir = Direction::kLocal;
  const char* name = "local";  // "local" or "remote", for messages

  // Builds the GID indexes of `ep`. REQUIRES: ep set.
  void Index();

  // The GID this side sends from at `sgid_index`: the table entry, or, when the
  // side publishes no table, its path.sgid if the index matches. nullptr if
  // unknown or absent (TableKnown() tells which).
  const GidEntry* SgidEntry(uint16_t sgid_index) const;
  // True when `gid` is in the published table.
  bool HasGid(const Gid& gid) const;
  bool TableKnown() const { return !ep->gid_table.empty(); }
  // True when this side published no GID it sends from (no path.sgid, or the
  // all-zero GID, as a pingpong peer without -g).
  bool PublishedNoGid() const { return !ep->path.sgid || IsZeroGid(ep->path.sgid->gid); }
  // True when the sgid_index of this side's plan is not a fact: the plan was
  // derived and the side published no GID, so the index is the planner's
  // default (0), not the GID it sends from.
  bool SgidUnknown() const { return plan_derived && PublishedNoGid(); }

  bool LinkKnown() const { return ep->port.link_layer != LinkLayer::kUnspecified; }
  bool IsInfiniBand() const { return ep->port.link_layer == LinkLayer::kInfiniBand; }
  // Ethernet link layer, or an unspecified one with a RoCE GID in use.
  bool IsEthernet() const;
  // Subnet prefix of this side: the port's, else its sgid's; nullopt if unknown.
  std::optional<uint64_t> SubnetPrefix() const;
  // LIDs of this side's port: [lid, lid + 2^lmc - 1].
  bool OwnsLid(uint16_t lid) const;
  // base LID | (src_path_bits & LMC mask): the SLID this side's packets carry.
  uint16_t SourceLid(uint8_t src_path_bits) const;

 private:
  std::array<const GidEntry*, 256> by_index_{};
  std::vector<Gid> sorted_gids_;
};

struct Context {
  Transport transport = Transport::kRc;  // the local side's; rules select on it
  SideView local;
  SideView remote;
  // QP positions checked pairwise: the minimum over both QP lists and plans.
  size_t n = 0;
  // The SA's path from the local port to the remote one; nullptr if not asked.
  const PathRecord* sa_path = nullptr;
  // The kernel's facts on the local side's RoCE path; nullptr if not read.
  const RocePathFacts* roce_path = nullptr;

  bool Applies(Rule rule) const { return Meta(rule).transports.Has(transport); }

  // Calls f(x, y) with (local, remote), then (remote, local).
  template <typename F>
  void BothDirections(F&& f) const {
    f(local, remote);
    f(remote, local);
  }
};

// What a rule reports. x_value/y_value are the judged side's and the peer's
// values; the sink puts them in Finding::local_value/remote_value.
struct Report {
  std::optional<size_t> qp = std::nullopt;
  std::string x_value = {};
  std::string y_value = {};
  std::string message = {};
  std::string fix = {};
  std::string_view attribute = {};  // empty: the rule's catalogued attribute
};

// Collects findings: merges identical ones (more_qps), caps distinct per-QP
// findings of one rule and direction, and orders the result by severity.
class FindingSink {
 public:
  FindingSink(const Context& ctx, size_t max_listed_per_rule);

  // A violation of `rule` by side `x` (Direction = x.dir).
  void Add(Rule rule, const SideView& x, Report report);
  // A violation of a pair property (Direction::kBoth; x = local, y = remote).
  void AddPair(Rule rule, Report report);
  // `rule` could not be checked for `dir` because a fact is unknown.
  void Unchecked(Rule rule, Direction dir, std::string message, std::string_view attribute = {});

  std::vector<Finding> Take();

 private:
  void Emit(Rule rule, Severity severity, bool unchecked, Direction dir, Report report,
            std::string local_value, std::string remote_value);

  const Context& ctx_;
  size_t cap_;
  std::vector<Finding> findings_;
  std::unordered_map<std::string, size_t> seen_;  // merge key -> index in findings_
  // Per rule and direction: distinct per-QP findings listed, and those beyond the cap.
  std::array<std::array<size_t, 3>, kRuleCount> listed_{};
  std::array<std::array<uint32_t, 3>, kRuleCount> overflow_{};
};

// Rule families, called in this order by Validate().
void CheckLocalRules(const Context& ctx, FindingSink& sink);
void CheckPkeyRules(const Context& ctx, FindingSink& sink);
void CheckPsnQpnRules(const Context& ctx, FindingSink& sink);
void CheckMtuRules(const Context& ctx, FindingSink& sink);
void CheckRdAtomicRules(const Context& ctx, FindingSink& sink);
void CheckAddressRules(const Context& ctx, FindingSink& sink);
void CheckRoceRules(const Context& ctx, FindingSink& sink);
void CheckQkeyRules(const Context& ctx, FindingSink& sink);
void CheckSaRules(const Context& ctx, FindingSink& sink);
void CheckPathRules(const Context& ctx, FindingSink& sink);

// Value formatting shared by the rules (format.cc).
std::string Hex(uint64_t value, int digits);  // "0x0004b2" for (0x4b2, 6)
std::string Qpn(uint32_t qpn);                // 24-bit hex
std::string Psn(uint32_t psn);                // 24-bit hex
std::string Lid(uint32_t lid);                // "0x0007 (7)": 16-bit hex, decimal alongside
std::string Dec(uint64_t value);
std::string MtuText(Mtu mtu);                             // "1024", "invalid (7)"
std::string GidEntryText(const GidEntry& e);              // "3 ::ffff:10.0.0.1 (roce-v2, ipv4)"
std::string SgidText(uint16_t index, const GidEntry* e);  // entry text, or "index 3"
GidFamily FamilyOf(const GidEntry& e);                    // e.family, else from the bytes

}  // namespace qpconnect::validate_internal
