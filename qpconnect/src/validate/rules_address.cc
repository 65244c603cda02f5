// SPDX-License-Identifier: MIT
// Address-vector rules (port, LID, GRH, GID): ah-port-mismatch, dlid-not-peer-lid,
// slid-not-peer-dlid, src-path-bits-above-lmc, ud-multicast-destination,
// sgid-index-not-in-table, sgid-index-too-large, sgid-zero, dgid-zero,
// dgid-not-in-peer-table, link-local-across-subnets, hop-limit-too-low,
// flow-label-out-of-range.
// Sources: the seed (port_num(X) == ah_attr.port_num(X); dlid(X) is assigned to
// Y's port; "port_num(X) + src_path_bits(X) == dlid(Y)", which the IB spec means
// as SLID(X) = base LID(X) with its low LMC bits set to src_path_bits(X); with a
// GRH, dgid(X) is in Y's GID table; UD multicast needs group membership);
// IBA vol. 1 ch. 4 (LID, LMC, GID) and ch. 8 (GRH); ibv_modify_qp(3),
// ibv_create_ah(3), ibv_attach_mcast(3).
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

uint16_t LmcMask(uint8_t lmc) {
  if (lmc >= 16) return 0xffff;
  return static_cast<uint16_t>((1u << lmc) - 1u);
}

bool IsMulticastLid(uint16_t lid) { return lid >= 0xc000 && lid <= 0xfffe; }

std::string LidRange(const SideView& s) {
  const uint32_t base = s.ep->port.lid;
  const uint32_t last = base + LmcMask(s.ep->port.lmc);
  if (last == base) return "LID " + Lid(base);
  return "LIDs " + Hex(base, 4) + ".." + Hex(last, 4) + " (" + Dec(base) + ".." + Dec(last) +
         ", LMC " + Dec(s.ep->port.lmc) + ")";
}

// True when the path from `s` to `d` likely crosses a router: a different IB or
// IPv6 /64 prefix, or a different IPv4 /24 for IPv4-mapped GIDs. Mixed families
// and link-local pairs are left to their own rules.
bool LikelyRouted(const Gid& s, const Gid& d) {
  if (IsZeroGid(s) || IsZeroGid(d) || IsMulticastGid(d)) return false;
  const bool s4 = IsIpv4MappedGid(s);
  const bool d4 = IsIpv4MappedGid(d);
  if (s4 != d4) return false;
  if (s4) return s[12] != d[12] || s[13] != d[13] || s[14] != d[14];
  if (IsLinkLocalGid(s) != IsLinkLocalGid(d)) return false;
  return GidSubnetPrefix(s) != GidSubnetPrefix(d);
}

// True when X's address vector for QP i sends through a router, so its dlid is
// a router's LID rather than the peer's.
bool RoutedAv(const SideView& x, const AddressVector& ah) {
  if (!ah.is_global || IsZeroGid(ah.dgid)) return false;
  const std::optional<uint64_t> prefix = x.SubnetPrefix();
  return prefix && GidSubnetPrefix(ah.dgid) != *prefix && !IsMulticastGid(ah.dgid);
}

// The fixes below name what fits the side's link: RoCE habits (GID types,
// IPv4-mapped GIDs, qpconnect's RoCE hop limit) are not advice for InfiniBand.
std::string HopLimitFix(const SideView& x) {
  if (x.IsEthernet()) return "use hop_limit 64 (qpconnect's RoCE default) for routed paths";
  if (x.IsInfiniBand()) {
    return "set hop_limit to at least the number of IB routers on the path (the hop limit of "
           "the SA's PathRecord: qp-info --path DEST); qpconnect uses 64 across InfiniBand "
           "subnets";
  }
  return "use hop_limit 64 for routed paths (qpconnect's default across subnets)";
}

std::string LinkLocalFix(const SideView& x) {
  if (x.IsInfiniBand()) {
    return "across IB routers use GIDs of a routable subnet prefix on both sides (the SM "
           "assigns it; the default fe80:: prefix is not routed), or stay within one subnet";
  }
  return "use routable GIDs (IPv4-mapped or global IPv6 on RoCE v2) on both sides, or "
         "link-local on both within one L2 segment";
}

std::string SgidZeroFix(const SideView& x) {
  if (x.IsInfiniBand()) return "pick a populated GID index (qp-info lists the table)";
  return "pick another GID index (on Soft-RoCE the link-local entry vanishes when the netdev "
         "loses its IPv6 address; index 1 is often the IPv4 GID)";
}

std::string FlowLabelFix(const SideView& x) {
  if (x.IsInfiniBand()) return "use a flow label of at most 0xfffff (0: none)";
  return "use a flow label of at most 0xfffff (0 lets RoCE v2 hardware derive one)";
}

// Rules on X's own address vectors (Y is the peer).
void CheckOwnAv(const SideView& x, const SideView& y, FindingSink& sink) {
  const std::string who = std::string("the ") + x.name + " ";
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const QpAttrs& a = qps[i];
    const AddressVector& ah = a.ah;
    if (ah.port_num != a.port_num) {
      sink.Add(Rule::kAhPortMismatch, x,
               {.qp = i,
                .x_value = "ah " + Dec(ah.port_num) + ", qp " + Dec(a.port_num),
                .message = who + "address vector uses port " + Dec(ah.port_num) +
                           " but the QP is bound to port " + Dec(a.port_num),
                .fix = "set ah_attr.port_num to the QP's port_num (" + Dec(a.port_num) + ")"});
    }
    const uint16_t mask = LmcMask(x.ep->port.lmc);
    if (!x.IsEthernet() && x.ep->port.lid != 0 && (ah.src_path_bits & ~mask) != 0) {
      sink.Add(Rule::kSrcPathBitsAboveLmc, x,
               {.qp = i,
                .x_value = Dec(ah.src_path_bits) + " (LMC " + Dec(x.ep->port.lmc) + ")",
                .message = who + "src_path_bits " + Dec(ah.src_path_bits) +
                           " has bits above the port's LMC " + Dec(x.ep->port.lmc) +
                           "; they are ignored",
                .fix = "use src_path_bits below " + Dec(mask + 1u)});
    }
    if (!ah.is_global) continue;

    if (ah.flow_label > kFlowLabelMask) {
      sink.Add(Rule::kFlowLabelOutOfRange, x,
               {.qp = i,
                .x_value = Hex(ah.flow_label, 5),
                .message = who + "flow_label " + Hex(ah.flow_label, 5) + " exceeds 20 bits",
                .fix = FlowLabelFix(x)});
    }
    if (ah.sgid_index > kMaxSgidIndex) {
      sink.Add(Rule::kSgidIndexTooLarge, x,
               {.qp = i,
                .x_value = Dec(ah.sgid_index),
                .message = who + "sgid_index " + Dec(ah.sgid_index) +
                           " cannot be expressed: ibv_global_route.sgid_index is 8 bits, so it "
                           "would be truncated to " +
                           Dec(ah.sgid_index & 0xff),
                .fix = "use a GID at index 0..255 (the table usually repeats each address at a "
                       "low index; qp-info lists the table)"});
      continue;
    }

    // A derived plan of a side that published no GID holds the planner's
    // default index, not the GID the side sends from: nothing to judge.
    const GidEntry* sgid = x.SgidUnknown() ? nullptr : x.SgidEntry(ah.sgid_index);
    if (x.SgidUnknown()) {
      sink.Unchecked(Rule::kSgidIndexNotInTable, x.dir,
                     who + "side published no GID: which one it sends from is unknown", "sgid");
    } else if (sgid == nullptr) {
      if (!x.TableKnown()) {
        sink.Unchecked(
            Rule::kSgidIndexNotInTable, x.dir,
            who + "side publishes no GID table (and no sgid at index " + Dec(ah.sgid_index) + ")");
      } else {
        sink.Add(Rule::kSgidIndexNotInTable, x,
                 {.qp = i,
                  .x_value = Dec(ah.sgid_index),
                  .message = who + "sgid_index " + Dec(ah.sgid_index) +
                             " is not a valid entry of its GID table",
                  .fix = "pick a populated index (`show_gids` or "
                         "/sys/class/infiniband/DEV/ports/N/gids/) of the type the peer uses"});
      }
    } else if (IsZeroGid(sgid->gid)) {
      sink.Add(Rule::kSgidZero, x,
               {.qp = i,
                .x_value = SgidText(ah.sgid_index, sgid),
                .message = who + "GID at sgid_index " + Dec(ah.sgid_index) + " is all zeros",
                .fix = SgidZeroFix(x)});
    }
    if (IsZeroGid(ah.dgid) && y.SgidUnknown()) {
      // The peer published no GID and applied none we know of (no plan of
      // its own): the dgid had nothing to come from. Say so, on the peer. A
      // peer whose own plan names an sgid_index is judged by that instead
      // (sgid-index-not-in-table, or this rule on X below).
      sink.Add(Rule::kDgidZero, y,
               {.x_value = "no GID published",
                .y_value = "dgid ::",
                .message = std::string("the ") + y.name + " side published no GID, so the " +
                           x.name + " side, which sends with a GRH, has no dgid to send to",
                .fix = std::string("publish the GID the ") + y.name +
                       " side sends from (qp-connect does; pingpong: pass -g on both sides)",
                .attribute = "sgid"});
      continue;
    }
    if (IsZeroGid(ah.dgid)) {
      sink.Add(Rule::kDgidZero, x,
               {.qp = i,
                .x_value = "::",
                .message = who + "side sends with a GRH to the all-zero GID",
                .fix = "give the peer's GID (pingpong: pass -g on both sides; qpconnect: the "
                       "peer must publish its sgid)"});
      continue;
    }
    if (sgid == nullptr || IsZeroGid(sgid->gid) || IsMulticastGid(ah.dgid)) continue;
    const Gid& s = sgid->gid;
    if (!IsIpv4MappedGid(s) && !IsIpv4MappedGid(ah.dgid) &&
        IsLinkLocalGid(s) != IsLinkLocalGid(ah.dgid)) {
      sink.Add(
          Rule::kLinkLocalAcrossSubnets, x,
          {.qp = i,
           .x_value = "sgid " + GidToString(s) + " -> dgid " + GidToString(ah.dgid),
           .message = who + "side pairs a link-local GID with a routable one (" + GidToString(s) +
                      " -> " + GidToString(ah.dgid) + "): link-local traffic is not routed",
           .fix = LinkLocalFix(x),
           .attribute = IsLinkLocalGid(s) ? "sgid_index" : "dgid"});
    }
    if (ah.hop_limit <= 1 && LikelyRouted(s, ah.dgid)) {
      sink.Add(
          Rule::kHopLimitTooLow, x,
          {.qp = i,
           .x_value = Dec(ah.hop_limit),
           .message = who + "hop_limit is " + Dec(ah.hop_limit) + " but " + GidToString(ah.dgid) +
                      " looks like another subnet than " + GidToString(s),
           .fix = HopLimitFix(x)});
    }
  }
}

// Rules on X's address vectors against Y's port and GID table.
void CheckCross(const Context& ctx, const SideView& x, const SideView& y, FindingSink& sink) {
  const bool ud = ctx.transport == Transport::kUd;
  const bool lid_fabric = !x.IsEthernet() && !y.IsEthernet();
  for (size_t i = 0; i < ctx.n; ++i) {
    const AddressVector& ah = x.plan->qps[i].ah;
    if (ud && (IsMulticastLid(ah.dlid) || (ah.is_global && IsMulticastGid(ah.dgid)))) {
      const bool by_lid = IsMulticastLid(ah.dlid);
      sink.Add(Rule::kUdMulticastDestination, x,
               {.qp = i,
                .x_value = by_lid ? Lid(ah.dlid) : GidToString(ah.dgid),
                .message = std::string("the ") + x.name + " side sends to multicast " +
                           (by_lid ? "DLID " + Lid(ah.dlid) : "DGID " + GidToString(ah.dgid)) +
                           "; the " + y.name + " QP must be attached to that group",
                .fix = "make sure the receiver calls ibv_attach_mcast for the group (after "
                       "joining it through the SA)",
                .attribute = by_lid ? "dlid" : "dgid"});
      continue;
    }

    if (lid_fabric) {
      const bool routed = RoutedAv(x, ah);
      if (routed) {
        sink.Unchecked(Rule::kDlidNotPeerLid, x.dir,
                       std::string("the ") + x.name + " path is routed to another subnet: its " +
                           "dlid is a router's LID");
      } else if (y.ep->port.lid == 0) {
        // An InfiniBand port with LID 0 is reported by lid-zero.
        if (!y.IsInfiniBand()) {
          sink.Unchecked(Rule::kDlidNotPeerLid, x.dir,
                         std::string("the ") + y.name + " port states no LID");
        }
      } else if (!y.OwnsLid(ah.dlid)) {
        sink.Add(Rule::kDlidNotPeerLid, x,
                 {.qp = i,
                  .x_value = Lid(ah.dlid),
                  .y_value = LidRange(y),
                  .message = std::string("the ") + x.name + " dlid " + Lid(ah.dlid) +
                             " is not a LID of the " + y.name + " port (" + LidRange(y) + ")",
                  .fix = "set dlid to the peer's base LID " + Lid(y.ep->port.lid) +
                         " plus its src_path_bits"});
      }
      const AddressVector& peer_ah = y.plan->qps[i].ah;
      if (ctx.Applies(Rule::kSlidNotPeerDlid) && x.ep->port.lid != 0 && !RoutedAv(y, peer_ah) &&
          x.OwnsLid(peer_ah.dlid) && peer_ah.dlid != x.SourceLid(ah.src_path_bits)) {
        const uint16_t slid = x.SourceLid(ah.src_path_bits);
        sink.Add(
            Rule::kSlidNotPeerDlid, x,
            {.qp = i,
             .x_value = "src_path_bits " + Dec(ah.src_path_bits) + ", SLID " + Lid(slid),
             .y_value = "dlid " + Lid(peer_ah.dlid),
             .message = std::string("the ") + x.name + " side sends from LID " + Lid(slid) +
                        " but the " + y.name + " side addresses it as LID " + Lid(peer_ah.dlid),
             .fix = "make the peer's dlid equal base LID | src_path_bits (" + Lid(slid) +
                    "), or set src_path_bits to " +
                    Dec(static_cast<uint32_t>(peer_ah.dlid - x.ep->port.lid))});
      }
    }

    if (!ah.is_global || IsZeroGid(ah.dgid) || (ud && IsMulticastGid(ah.dgid))) continue;
    if (!y.TableKnown()) {
      const bool is_published = y.ep->path.sgid && y.ep->path.sgid->gid == ah.dgid;
      if (!is_published) {
        sink.Unchecked(Rule::kDgidNotInPeerTable, x.dir,
                       std::string("the ") + y.name + " side publishes no GID table");
      }
    } else if (!y.HasGid(ah.dgid)) {
      std::string fix = "use a GID of the peer's table";
      if (y.ep->path.sgid) fix += " (it sends from " + GidToString(y.ep->path.sgid->gid) + ")";
      fix += "; GID indices differ between hosts, so exchange the GID value, not the index";
      sink.Add(Rule::kDgidNotInPeerTable, x,
               {.qp = i,
                .x_value = GidToString(ah.dgid),
                .y_value = "not among " + Dec(y.ep->gid_table.size()) + " GIDs",
                .message = std::string("the ") + x.name + " dgid " + GidToString(ah.dgid) +
                           " is not in the " + y.name + " port's GID table",
                .fix = std::move(fix)});
    }
  }
}

}  // namespace

void CheckAddressRules(const Context& ctx, FindingSink& sink) {
  CheckOwnAv(ctx.local, ctx.remote, sink);
  CheckOwnAv(ctx.remote, ctx.local, sink);
  ctx.BothDirections([&](const SideView& x, const SideView& y) { CheckCross(ctx, x, y, sink); });
}

}  // namespace qpconnect::validate_internal
