// SPDX-License-Identifier: MIT
// The joint choice of the GID pair (issue 31): after the exchange each side
// computes, from both descriptions' GID tables, the same pair of source GIDs,
// so that two sides whose own choices differ (one lost its IPv4 address: one
// picks IPv4, the other IPv6) still meet, with no extra round trip.
//
// A pair is compatible when both entries are RoCE entries usable in an
// address vector (index 0..255) of the same type; for RoCE v2 also of the
// same family and scope (link-local only with link-local). Link-local pairs
// reach only the link both ports share, which the descriptions cannot show:
// they are taken only when no routable pair exists at all (an address was
// removed), never in place of one.
//
// Among compatible pairs the best is, in order (issue 39):
//   1. a pair known to reach: its two addresses share a subnet (each side
//      publishes its GIDs' prefix lengths, GidEntry::prefix_len:
//      address_prefix.h), or it is exactly the out-of-band connection's two
//      ends (a route joined them); then a pair not known either way; last a
//      pair in two different subnets (only a router joins them);
//   2. the out-of-band connection's two ends, then its family, then a pair
//      whose addresses' subnets hold its two ends;
//   3. RoCE v2 over v1; routable over link-local; IPv4 over IPv6 (as
//      SelectGid); the pair both sides picked alone; then lower indices, the
//      two sides taken in an order both compute alike.
// Every step is symmetric in the two sides, so the peer, computing from the
// swapped inputs, gets the same pair. The subnets (1, and the subnets of 2)
// decide only when both descriptions publish prefix lengths: a peer from
// before issue 39 ranks without them, and both sides then compute its order.
// Routes are not asked here: each side's kernel would answer for itself
// (the two could differ), so they stay the validator's (rules_path.cc).
//
// A pinned GID (-g, GidChoice::kPinned) is kept: the pinned side's entry is
// the only candidate on that side. Both pinned, or a side that does not take
// part (GidChoice::kOwn): nothing is changed and the validator judges the
// pair each side chose, as before.
//
// Thread-safety: pure functions. Part of qpconnect::core (no verbs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qpconnect/diagnostic.h"
#include "qpconnect/endpoint.h"

namespace qpconnect {

struct GidPairInput {
  const EndpointInfo* local = nullptr;   // REQUIRED: not null
  const EndpointInfo* remote = nullptr;  // REQUIRED: not null
  // The two ends of the out-of-band connection as GIDs (IPv4 as
  // ::ffff:a.b.c.d), in either order; empty when the channel has no
  // addresses (files, stdio). Its family is preferred, and a pair that is
  // exactly these two ends above all.
  std::vector<Gid> oob_addresses;
};

// One pair the choice did not take, and why.
struct GidPairVerdict {
  GidEntry local;
  GidEntry remote;
  bool compatible = false;  // false: rejected; true: compatible, ranked lower
  // "types differ (roce-v1 / roce-v2)", "ranked lower: roce-v1 (v2 preferred)",
  // "ranked lower: in different subnets (10.88.0.2/24 and 10.99.0.1/24): ..."
  std::string why;
};

enum class GidPairOutcome : uint8_t {
  kChosen,      // local/remote hold the pair both sides use
  kNotApplied,  // the choice does not apply (why says so): each side keeps its own
  kNone,        // no compatible pair: each side keeps its own; others says why
};
const char* GidPairOutcomeName(GidPairOutcome o);  // "chosen", "not-applied", "none"

struct GidPairChoice {
  GidPairOutcome outcome = GidPairOutcome::kNotApplied;
  std::optional<GidEntry> local;       // kChosen: the local side's source GID
  std::optional<GidEntry> remote;      // kChosen: the remote side's source GID
  std::string why;                     // one line: why this pair, or why none
  std::vector<GidPairVerdict> others;  // every other pair considered
};

// The joint choice for `input` (see the file comment). Deterministic: from
// the swapped input (remote as local) it returns the same pair, swapped.
GidPairChoice ChooseGidPair(const GidPairInput& input);

// The finding that reports `choice`: kChosen "gid-pair-chosen" (info, naming
// the pair and why the others were not taken), kNone "gid-pair-none"
// (warning, naming why each pair was rejected); nullopt when not applied.
// At most `max_listed` other pairs are named (then "and N more").
std::optional<Finding> GidPairFinding(const GidPairChoice& choice, size_t max_listed = 8);

// Before the exchange: a side on an Ethernet port whose GID was chosen
// automatically (GidChoice::kOwn, a source GID known) takes part in the
// joint choice and says so to the peer (GidChoice::kJoint). A pinned GID or a
// port without RoCE stays as it is.
void JoinGidChoice(EndpointInfo& local);

// After the exchange: ChooseGidPair() on the two descriptions and, when a
// pair is chosen, that pair written into both (path.sgid of each), so that
// the plan and the validator see it. Returns the choice for the report.
GidPairChoice ApplyGidPair(EndpointInfo& local, EndpointInfo& remote,
                           std::vector<Gid> oob_addresses);

// "[1] ::ffff:10.99.0.1 roce-v2" for reports.
std::string GidEntryLabel(const GidEntry& e);

}  // namespace qpconnect
