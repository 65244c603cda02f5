// SPDX-License-Identifier: MIT
// RoCE (Ethernet link layer) rules: grh-required, dlid-on-ethernet,
// gid-type-mismatch, gid-family-mismatch, traffic-class-mismatch.
// Sources: IBA vol. 1 annex A16 (RoCE: every packet carries a GRH; addressing
// is by GID) and annex A17 (RoCE v2: UDP/IP encapsulation, IPv4 or IPv6);
// ibv_query_port(3) (link_layer, IBV_QPF_GRH_REQUIRED); peers.md items 2-7.
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

// Rules on one side's address vectors.
void CheckOwnAv(const SideView& x, const SideView& y, bool link_mismatch, FindingSink& sink) {
  const std::string who = std::string("the ") + x.name + " ";
  const bool grh_needed =
      x.IsEthernet() || x.ep->port.grh_required || (!x.LinkKnown() && y.IsEthernet());
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const AddressVector& ah = qps[i].ah;
    if (!ah.is_global) {
      if (grh_needed) {
        sink.Add(Rule::kGrhRequired, x,
                 {.qp = i,
                  .x_value = "is_global 0",
                  .message =
                      who + "address vector has no GRH, but its port " +
                      (x.IsEthernet() || !x.LinkKnown() ? "is RoCE (Ethernet)" : "requires a GRH"),
                  .fix = "set is_global = 1 with the peer's GID as dgid and a valid sgid_index "
                         "(pingpong: pass -g on both sides)"});
      } else if (!x.LinkKnown() && x.ep->port.lid == 0) {
        sink.Unchecked(Rule::kGrhRequired, x.dir,
                       who + "link layer is not stated and the port has no LID (RoCE?)");
      }
    }
    // Across link layers the dlid is meaningless; link-layer-mismatch reports it.
    if (x.IsEthernet() && ah.dlid != 0 && !link_mismatch) {
      sink.Add(Rule::kDlidOnEthernet, x,
               {.qp = i,
                .x_value = Lid(ah.dlid),
                .message = who + "side sets dlid " + Lid(ah.dlid) +
                           " on an Ethernet port, where LIDs do not exist",
                .fix = "address the peer by GID only (dlid 0); check the dgid is the peer's"});
    }
  }
}

bool IsRoceType(GidType t) { return t == GidType::kRoceV1 || t == GidType::kRoceV2; }

// The two sides' source GIDs for QP pair i: same RoCE version, same family.
void CheckGidPair(const Context& ctx, size_t i, FindingSink& sink) {
  const AddressVector& lah = ctx.local.plan->qps[i].ah;
  const AddressVector& rah = ctx.remote.plan->qps[i].ah;
  if (!lah.is_global || !rah.is_global) return;  // grh-required reports it
  // A side that published no GID is not assumed to send from index 0.
  if (ctx.local.SgidUnknown() || ctx.remote.SgidUnknown()) {
    const Direction d = ctx.local.SgidUnknown() && ctx.remote.SgidUnknown() ? Direction::kBoth
                        : ctx.local.SgidUnknown()                           ? Direction::kLocal
                                                                            : Direction::kRemote;
    const std::string what =
        d == Direction::kBoth
            ? "neither side published a GID: which GIDs (RoCE v1 or v2) they send from is unknown"
            : std::string("the ") + (d == Direction::kLocal ? "local" : "remote") +
                  " side published no GID: which GID (RoCE v1 or v2) it sends from is unknown";
    sink.Unchecked(Rule::kGidTypeMismatch, d, what);
    return;
  }
  const GidEntry* le = ctx.local.SgidEntry(lah.sgid_index);
  const GidEntry* re = ctx.remote.SgidEntry(rah.sgid_index);
  if (le == nullptr || re == nullptr) return;            // sgid-index-not-in-table reports it
  if (IsZeroGid(le->gid) || IsZeroGid(re->gid)) return;  // sgid-zero reports it
  if (le->type == GidType::kUnspecified || re->type == GidType::kUnspecified) {
    const Direction d = le->type == re->type                ? Direction::kBoth
                        : le->type == GidType::kUnspecified ? Direction::kLocal
                                                            : Direction::kRemote;
    sink.Unchecked(Rule::kGidTypeMismatch, d,
                   "the type (RoCE v1/v2) of a GID in use is not stated");
  } else if (le->type != re->type) {
    sink.AddPair(Rule::kGidTypeMismatch,
                 {.qp = i,
                  .x_value = GidEntryText(*le),
                  .y_value = GidEntryText(*re),
                  .message = std::string("the local side sends ") + GidTypeName(le->type) +
                             " and the remote side " + GidTypeName(re->type) +
                             ": the two never see each other's packets",
                  .fix = "choose sgid_index entries of the same type on both sides (RoCE v2 "
                         "preferred; GID indices and types differ between hosts, check each "
                         "host's table)"});
    return;
  }
  // Address family only matters for RoCE v2 (v1 has no IP header).
  if (le->type == GidType::kRoceV1 || re->type == GidType::kRoceV1) return;
  if (!IsRoceType(le->type) && le->type != GidType::kUnspecified) return;
  if (!IsRoceType(re->type) && re->type != GidType::kUnspecified) return;
  const GidFamily lf = FamilyOf(*le);
  const GidFamily rf = FamilyOf(*re);
  if (lf == rf) return;
  sink.AddPair(Rule::kGidFamilyMismatch,
               {.qp = i,
                .x_value = GidEntryText(*le),
                .y_value = GidEntryText(*re),
                .message = std::string("the local GID is ") + GidFamilyName(lf) +
                           " but the remote GID is " + GidFamilyName(rf),
                .fix = "use the same address family on both sides (both IPv4-mapped "
                       "::ffff:a.b.c.d GIDs, or both IPv6)"});
}

// The traffic class side X sends with: its plan's when known, else what it
// published.
uint8_t TrafficClass(const SideView& x, size_t i) {
  if (x.plan && i < x.plan->qps.size()) return x.plan->qps[i].ah.traffic_class;
  return x.ep->path.traffic_class;
}

// Requests and responses in one priority class (lossless RoCE fabrics).
void CheckTrafficClass(const Context& ctx, FindingSink& sink) {
  const size_t n = std::max<size_t>(ctx.n, 1);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t l = TrafficClass(ctx.local, i);
    const uint8_t r = TrafficClass(ctx.remote, i);
    if (l == r) continue;
    sink.AddPair(Rule::kTrafficClassMismatch,
                 {.qp = i,
                  .x_value = Dec(l) + " (DSCP " + Dec(l >> 2) + ")",
                  .y_value = Dec(r) + " (DSCP " + Dec(r >> 2) + ")",
                  .message = "the local side sends with traffic class " + Dec(l) +
                             " and the remote side with " + Dec(r) +
                             ": requests and responses ride different priority classes",
                  .fix = "use the same --tclass on both sides (the class your fabric makes "
                         "lossless, e.g. DSCP 26 = traffic class 104)"});
    return;  // one finding says it; the class is per side, not per QP
  }
}

}  // namespace

void CheckRoceRules(const Context& ctx, FindingSink& sink) {
  const bool link_mismatch = ctx.local.LinkKnown() && ctx.remote.LinkKnown() &&
                             ctx.local.ep->port.link_layer != ctx.remote.ep->port.link_layer;
  ctx.BothDirections(
      [&](const SideView& x, const SideView& y) { CheckOwnAv(x, y, link_mismatch, sink); });
  // Across link layers, GID types say nothing new: link-layer-mismatch reports it.
  if (link_mismatch) return;
  if (!ctx.local.IsEthernet() && !ctx.remote.IsEthernet()) return;
  for (size_t i = 0; i < ctx.n; ++i) CheckGidPair(ctx, i, sink);
  CheckTrafficClass(ctx, sink);
}

}  // namespace qpconnect::validate_internal
