// SPDX-License-Identifier: MIT
#include "qpconnect/gid_pair.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "qpconnect/address_prefix.h"

namespace qpconnect {
namespace {

bool IsRoce(GidType t) { return t == GidType::kRoceV1 || t == GidType::kRoceV2; }

// An entry an address vector can send from.
bool Usable(const GidEntry& g) {
  return IsRoce(g.type) && g.index <= kMaxSgidIndex && !IsZeroGid(g.gid) && !IsMulticastGid(g.gid);
}

GidFamily Family(const GidEntry& g) {
  return g.family != GidFamily::kUnspecified ? g.family : FamilyOfGid(g.gid, g.type);
}

// The order both sides compute alike: by identity, port, first QPN, table.
bool LocalFirst(const EndpointInfo& l, const EndpointInfo& r) {
  auto key = [](const EndpointInfo& e) {
    return std::make_tuple(e.identity.node_guid, e.identity.host, e.identity.device,
                           e.port.port_num, e.qps.empty() ? 0u : e.qps.front().qpn);
  };
  return key(l) <= key(r);
}

std::vector<const GidEntry*> AllUsable(const EndpointInfo& e) {
  std::vector<const GidEntry*> out;
  for (const auto& g : e.gid_table) {
    if (Usable(g)) out.push_back(&g);
  }
  return out;
}

// Why (l, r) cannot carry traffic, ignoring pins; empty when it can.
std::string Incompatible(const GidEntry& l, const GidEntry& r) {
  if (l.type != r.type) {
    return std::string("types differ (") + GidTypeName(l.type) + " / " + GidTypeName(r.type) +
           "): neither side sees the other's packets";
  }
  if (l.type != GidType::kRoceV2) return "";  // v1 has no IP header
  if (Family(l) != Family(r)) {
    return std::string("families differ (") + GidFamilyName(Family(l)) + " / " +
           GidFamilyName(Family(r)) + ")";
  }
  if (IsLinkLocalGid(l.gid) != IsLinkLocalGid(r.gid)) {
    return "one address is link-local, the other routable: a link-local address reaches only "
           "its own link";
  }
  return "";
}

bool BothLinkLocal(const GidEntry& l, const GidEntry& r) {
  return IsLinkLocalGid(l.gid) && IsLinkLocalGid(r.gid);
}

// Ranking components, larger is better; each symmetric in the two sides.
enum RankKey : size_t {
  kReach,       // one subnet, or the out-of-band connection's two ends
  kOobPair,     // exactly the out-of-band connection's two ends
  kOobFamily,   // the out-of-band connection's family
  kOobSubnet,   // each address in the subnet of one of the out-of-band ends
  kRoceV2,      // RoCE v2 over v1
  kRoutable,    // routable over link-local
  kIpv4,        // IPv4 over IPv6
  kPickedAlone  // the GIDs the two sides picked alone
};
constexpr size_t kKeys = 8;
using Key = std::array<int, kKeys>;
constexpr std::array<const char*, kKeys> kLoses = {
    "not in one subnet",  // replaced by the subnets' text (Loses)
    "not the out-of-band connection's two ends",
    "not the out-of-band connection's family",
    "not in the out-of-band connection's subnets",
    "roce-v1 (v2 preferred)",
    "link-local (a routable pair preferred)",
    "ipv6 (ipv4 preferred when nothing else decides)",
    "not the GIDs the two sides picked alone"};

// Marks a link-local pair ruled out by a routable one (named once known).
constexpr const char* kLinkLocalRuledOut = "link-local";

struct Candidate {
  const GidEntry* l;
  const GidEntry* r;
  std::string rejected;
  Key key{};
  std::pair<int, int> order;  // indices, in the order both sides compute alike
};

// 1 when the pair is exactly the out-of-band connection's two ends. Both
// sides see the same two ends unless an address is translated between them
// (NAT), and then neither sees its pair as them: symmetric either way.
int IsOobPair(const GidEntry& l, const GidEntry& r, const std::vector<Gid>& oob) {
  if (oob.size() != 2) return 0;
  return (l.gid == oob[0] && r.gid == oob[1]) || (l.gid == oob[1] && r.gid == oob[0]) ? 1 : 0;
}

// 1 when each address's subnet holds one of the out-of-band connection's
// two ends (the one side's, the other's): the pair runs where the exchange
// ran. Symmetric: the same two ends, in either order.
int InOobSubnets(const GidEntry& l, const GidEntry& r, const std::vector<Gid>& oob) {
  if (oob.size() != 2) return 0;
  auto in = [](const GidEntry& g, const Gid& a) { return InSubnet(g.gid, g.prefix_len, a); };
  return (in(l, oob[0]) && in(r, oob[1])) || (in(l, oob[1]) && in(r, oob[0])) ? 1 : 0;
}

// Whether a description publishes its GIDs' prefix lengths (issue 39): the
// subnets decide only when both do, so that a peer from before, which ranks
// without them, computes the same pair.
bool PublishesPrefixes(const EndpointInfo& e) {
  return std::any_of(e.gid_table.begin(), e.gid_table.end(),
                     [](const GidEntry& g) { return g.prefix_len != 0; });
}

Key Rank(const GidEntry& l, const GidEntry& r, const GidPairInput& in, bool subnets) {
  const std::optional<GidEntry>& ls = in.local->path.sgid;
  const std::optional<GidEntry>& rs = in.remote->path.sgid;
  const bool oob_family_known = !in.oob_addresses.empty();
  const GidFamily oob_family = oob_family_known
                                   ? FamilyOfGid(in.oob_addresses.front(), GidType::kRoceV2)
                                   : GidFamily::kUnspecified;
  const int oob_pair = IsOobPair(l, r, in.oob_addresses);
  int reach = 1;  // not known
  if (subnets && l.type == GidType::kRoceV2) {
    switch (SubnetRelationOf(l, r)) {
      case SubnetRelation::kShared:
        reach = 2;
        break;
      case SubnetRelation::kApart:
        reach = oob_pair ? 2 : 0;  // the exchange itself was routed between them
        break;
      case SubnetRelation::kUnknown:
        break;
    }
  }
  return {reach,
          oob_pair,
          oob_family_known && Family(l) == oob_family ? 1 : 0,
          subnets ? InOobSubnets(l, r, in.oob_addresses) : 0,
          l.type == GidType::kRoceV2 ? 1 : 0,
          IsLinkLocalGid(l.gid) ? 0 : 1,
          Family(l) == GidFamily::kIpv4 ? 1 : 0,
          (ls && ls->index == l.index ? 1 : 0) + (rs && rs->index == r.index ? 1 : 0)};
}

// Why `c` ranked below `best`: the first key that differs.
std::string Loses(const Candidate& c, const Candidate& best) {
  for (size_t k = 0; k < kKeys; ++k) {
    if (c.key[k] == best.key[k]) continue;
    if (k != kReach) return std::string("ranked lower: ") + kLoses[k];
    const std::string two = AddressWithPrefix(*c.l) + " and " + AddressWithPrefix(*c.r);
    return c.key[k] == 0 ? "ranked lower: in different subnets (" + two +
                               "): only a router joins them, and a pair in one subnet exists"
                         : "ranked lower: not known to share a subnet (" + two +
                               "), and a pair in one subnet exists";
  }
  return "ranked lower: a pair of lower indices was taken";
}

std::string WhyChosen(const Candidate& c, bool link_local_only) {
  std::string why = std::string(GidTypeName(c.l->type)) + " " + GidFamilyName(Family(*c.l));
  if (link_local_only) {
    why +=
        " link-local on both sides: no routable pair exists (the two ports are taken to "
        "share a link)";
  }
  if (c.key[kReach] == 2 && !link_local_only &&
      SubnetRelationOf(*c.l, *c.r) == SubnetRelation::kShared) {
    why += "; in one subnet (" + AddressWithPrefix(*c.l) + " and " + AddressWithPrefix(*c.r) + ")";
  }
  if (c.key[kOobPair] > 0) {
    why += "; the out-of-band connection's two ends";
  } else if (c.key[kOobSubnet] > 0) {
    why += "; the out-of-band connection's family and subnets";
  } else if (c.key[kOobFamily] > 0) {
    why += "; the out-of-band connection's family";
  }
  if (c.key[kPickedAlone] == 2) why += "; the GIDs both sides picked alone";
  return why;
}

std::string PinReason(const char* side, const EndpointInfo& e) {
  return std::string("the ") + side + " side pinned GID index " +
         std::to_string(e.path.sgid ? e.path.sgid->index : 0) + " (-g)";
}

bool Pinned(const EndpointInfo& e) {
  return e.path.gid_choice == GidChoice::kPinned && e.path.sgid.has_value();
}

}  // namespace

const char* GidPairOutcomeName(GidPairOutcome o) {
  switch (o) {
    case GidPairOutcome::kChosen:
      return "chosen";
    case GidPairOutcome::kNone:
      return "none";
    case GidPairOutcome::kNotApplied:
      break;
  }
  return "not-applied";
}

std::string GidEntryLabel(const GidEntry& e) {
  return "[" + std::to_string(e.index) + "] " + GidToString(e.gid) + " " + GidTypeName(e.type);
}

GidPairChoice ChooseGidPair(const GidPairInput& in) {
  const EndpointInfo& local = *in.local;
  const EndpointInfo& remote = *in.remote;
  GidPairChoice out;
  if (local.port.link_layer != LinkLayer::kEthernet ||
      remote.port.link_layer != LinkLayer::kEthernet) {
    out.why = "not RoCE on both sides: each side's GID is kept";
    return out;
  }
  if (local.path.gid_choice == GidChoice::kOwn || remote.path.gid_choice == GidChoice::kOwn) {
    out.why = std::string("the ") +
              (local.path.gid_choice == GidChoice::kOwn ? "local" : "remote") +
              " side does not take part in the joint choice: each side's GID is kept";
    return out;
  }
  if (Pinned(local) && Pinned(remote)) {
    out.why = "both sides pinned their GID (-g): kept, and judged by the validator";
    return out;
  }
  const auto ls = AllUsable(local);
  const auto rs = AllUsable(remote);
  if (ls.empty() || rs.empty()) {
    out.why = std::string("the ") + (ls.empty() ? "local" : "remote") +
              " side published no usable RoCE GID: each side's GID is kept";
    return out;
  }

  // A routable compatible pair anywhere (pins aside) rules link-local out.
  const std::pair<const GidEntry*, const GidEntry*> routable = [&] {
    for (const GidEntry* l : ls) {
      for (const GidEntry* r : rs) {
        if (Incompatible(*l, *r).empty() && !BothLinkLocal(*l, *r)) return std::pair{l, r};
      }
    }
    return std::pair<const GidEntry*, const GidEntry*>{nullptr, nullptr};
  }();

  const bool local_first = LocalFirst(local, remote);
  const bool subnets = PublishesPrefixes(local) && PublishesPrefixes(remote);
  std::vector<Candidate> all;
  for (const GidEntry* l : ls) {
    for (const GidEntry* r : rs) {
      Candidate c{l, r, "", Rank(*l, *r, in, subnets), {}};
      c.order = local_first ? std::pair{int{l->index}, int{r->index}}
                            : std::pair{int{r->index}, int{l->index}};
      if (Pinned(local) && l->index != local.path.sgid->index) {
        c.rejected = PinReason("local", local);
      } else if (Pinned(remote) && r->index != remote.path.sgid->index) {
        c.rejected = PinReason("remote", remote);
      } else if (std::string why = Incompatible(*l, *r); !why.empty()) {
        c.rejected = std::move(why);
      } else if (BothLinkLocal(*l, *r) && routable.first != nullptr) {
        c.rejected = kLinkLocalRuledOut;  // the routable pair named below
      }
      all.push_back(std::move(c));
    }
  }
  auto better = [](const Candidate& a, const Candidate& b) {
    if (a.key != b.key) return a.key > b.key;
    return a.order < b.order;  // lower indices first
  };
  const Candidate* best = nullptr;
  for (const auto& c : all) {
    if (c.rejected.empty() && (best == nullptr || better(c, *best))) best = &c;
  }
  // The routable pair that rules link-local out: the one taken, if any.
  const std::string routable_text =
      best != nullptr ? GidToString(best->l->gid) + " / " + GidToString(best->r->gid)
      : routable.first != nullptr
          ? GidToString(routable.first->gid) + " / " + GidToString(routable.second->gid)
          : std::string();
  for (const auto& c : all) {
    if (&c == best) continue;
    GidPairVerdict v{*c.l, *c.r, c.rejected.empty(), c.rejected};
    if (v.why == kLinkLocalRuledOut) {
      v.why =
          "link-local: the descriptions cannot show both ports share a link, and a routable "
          "pair exists (" +
          routable_text + ")";
    }
    if (v.compatible) v.why = Loses(c, *best);
    out.others.push_back(std::move(v));
  }
  if (best == nullptr) {
    out.outcome = GidPairOutcome::kNone;
    out.why = "no compatible GID pair in the two tables: each side keeps its own GID";
    return out;
  }
  out.outcome = GidPairOutcome::kChosen;
  out.local = *best->l;
  out.remote = *best->r;
  out.why = WhyChosen(*best, BothLinkLocal(*best->l, *best->r));
  return out;
}

std::optional<Finding> GidPairFinding(const GidPairChoice& choice, size_t max_listed) {
  if (choice.outcome == GidPairOutcome::kNotApplied) return std::nullopt;
  Finding f;
  f.transports = kAllTransports;
  f.attribute = "sgid_index";
  std::string others;
  size_t listed = 0;
  for (const auto& v : choice.others) {
    if (listed == max_listed) {
      others += "; and " + std::to_string(choice.others.size() - listed) + " more";
      break;
    }
    others += (listed++ == 0 ? "" : "; ") + GidToString(v.local.gid) + " / " +
              GidToString(v.remote.gid) + ": " + v.why;
  }
  if (choice.outcome == GidPairOutcome::kChosen) {
    f.id = "gid-pair-chosen";
    f.severity = Severity::kInfo;
    f.local_value = GidEntryLabel(*choice.local);
    f.remote_value = GidEntryLabel(*choice.remote);
    f.message = "both sides send from this GID pair: " + choice.why +
                (others.empty() ? "" : " (not taken: " + others + ")");
    f.fix = "none needed; pin -g on both sides to choose another pair";
    return f;
  }
  f.id = "gid-pair-none";
  f.severity = Severity::kWarning;
  f.message = choice.why + " (" + others + ")";
  f.fix =
      "give both ports an address of one family on a common network (RoCE v2), or pin -g on "
      "both sides to entries of one type and family";
  return f;
}

void JoinGidChoice(EndpointInfo& local) {
  if (local.port.link_layer == LinkLayer::kEthernet && local.path.sgid &&
      local.path.gid_choice == GidChoice::kOwn) {
    local.path.gid_choice = GidChoice::kJoint;
  }
}

GidPairChoice ApplyGidPair(EndpointInfo& local, EndpointInfo& remote,
                           std::vector<Gid> oob_addresses) {
  GidPairChoice c = ChooseGidPair({&local, &remote, std::move(oob_addresses)});
  if (c.outcome == GidPairOutcome::kChosen) {
    local.path.sgid = c.local;
    remote.path.sgid = c.remote;
  }
  return c;
}

}  // namespace qpconnect
