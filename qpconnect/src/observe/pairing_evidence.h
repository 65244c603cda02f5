// SPDX-License-Identifier: MIT
// What the pairing weighs about a candidate peer: where a QP's destination
// points (Aim, Dest), what each direction's PSNs say (PsnState, Facts), and
// the evidence and candidate records built from them.
//
// Internal to pairing.cc (rules in qpconnect/observe/pairing.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>

#include "qpconnect/observe/observed.h"

namespace qpconnect::pairing_detail {

// PSNs this close (mod 2^24) count as continuous: A's next send PSN and B's
// next expected PSN differ only by what is in flight (and by how far apart in
// time the two hosts' snapshots were taken). Farther apart, they contradict.
constexpr uint32_t kPsnWindow = 1u << 16;
// PSNs this close count as close too: an idle pair's PSNs are equal, a
// moving one's differ by what is in flight, while two unrelated QPs fall this
// close by chance once in 32,768 directions (within the window, once in 128),
// both ways once in a billion. Among candidates equal in every other way, one
// close both ways is the likelier peer. The price: a true pair farther apart
// than this (fast, or snapshots taken far apart) loses to an unrelated QP
// close both ways, by chance once in a billion candidates; kept small for it.
constexpr uint32_t kPsnClose = 1u << 8;
// QP-number groups larger than this are searched by PSN, not enumerated.
constexpr size_t kScanLimit = 64;

// What one side's destination says about a candidate peer.
enum class Aim { kUnknown, kMatches, kContradicts };

struct AimResult {
  Aim aim = Aim::kUnknown;
  bool by_gid = false;  // else by LID
};

// Where a QP sends: a trace's or dump's address vector, or the destination a
// snapshot read from the QP's context.
struct Dest {
  std::optional<Gid> gid;
  std::optional<uint16_t> lid;
};

inline Dest DestOfAh(const AddressVector& ah) {
  Dest d;
  if (ah.is_global && !IsZeroGid(ah.dgid)) {
    d.gid = ah.dgid;
  } else if (ah.dlid != 0) {
    d.lid = ah.dlid;
  }
  return d;
}

inline Dest DestOf(const ObservedQp& q) {
  Dest d;
  if (q.applied) d = DestOfAh(q.applied->ah);
  if (!d.gid && q.dest_gid && !IsZeroGid(*q.dest_gid)) d.gid = q.dest_gid;
  if (!d.gid && !d.lid && q.dest_lid && *q.dest_lid != 0) d.lid = q.dest_lid;
  return d;
}

struct GidHash {
  size_t operator()(const Gid& g) const {
    uint64_t h = 1469598103934665603ull;
    for (uint8_t b : g) h = (h ^ b) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

// What one direction's PSNs say: A's next send PSN against B's next expected
// PSN, in the latest samples. Unknown when either is not known.
enum class PsnState : uint8_t { kUnknown, kContradicts, kContinuous, kClose };

inline PsnState PsnBetween(uint32_t a, uint32_t b) {
  const uint32_t d = std::min((a - b) & kPsnMask, (b - a) & kPsnMask);
  if (d <= kPsnClose) return PsnState::kClose;
  return d <= kPsnWindow ? PsnState::kContinuous : PsnState::kContradicts;
}

// What weighing a candidate reads of a QP, in 16 bytes (one cache line
// holds four: a million QPs are weighed in random order): its latest PSNs,
// its job (0: none named) and whether it has a destination address.
struct Facts {
  uint32_t sq = 0;
  uint32_t rq = 0;
  uint32_t job = 0;
  bool has_sq = false;
  bool has_rq = false;
  bool has_dest = false;
};
static_assert(sizeof(Facts) == 16);

inline Facts FactsOf(const ObservedQp& q) {
  Facts p;
  if (q.samples.empty()) return p;
  const ObservedSample& s = q.samples.back();
  if (s.sq_psn) {
    p.sq = *s.sq_psn;
    p.has_sq = true;
  }
  if (s.rq_psn) {
    p.rq = *s.rq_psn;
    p.has_rq = true;
  }
  return p;
}

inline PsnState Direction(const Facts& sender, const Facts& receiver) {
  if (!sender.has_sq || !receiver.has_rq) return PsnState::kUnknown;
  return PsnBetween(sender.sq, receiver.rq);
}

// The evidence that i and j are each other's peer; symmetric in i and j.
struct Evidence {
  int8_t address = 0;  // directions whose destination is the other's port
  // Directions with PSN continuity, and of those the close ones; both 0 when
  // a direction's PSNs contradict (a pair is never made on one direction's
  // PSNs while the other's say otherwise).
  int8_t psn = 0;
  int8_t close = 0;
  bool gid = false;
  bool lid = false;
  bool contradicted = false;  // a destination elsewhere, or another job

  std::tuple<int, int, int> Key() const { return {address, psn, close}; }
  bool Positive() const { return address > 0 || psn > 0; }
};

struct Candidate {
  uint32_t j = 0;
  Evidence evidence;
};

}  // namespace qpconnect::pairing_detail
