// SPDX-License-Identifier: MIT
// Pairing observed QPs (observed.h) into the connections they form, so that
// each pair can be judged: by the validator's rules where both sides'
// descriptions and applied attributes are known (traces, dumps), and by the
// live rules where only kernel state is (snapshots).
//
// Identities, each either matching, contradicting or silent about a
// candidate peer:
//   - QP numbers: A.dest_qpn == B.qpn and B.dest_qpn == A.qpn (mutual), or
//     A.dest_qpn == B.qpn where B never set one (one-sided);
//   - addresses: a QP's destination (a trace's dgid/dlid, a snapshot QP's
//     dgid/dlid where the kernel shows its context) against the other side's
//     port identity (a trace's GID table and LID, a snapshot host's ports);
//     a destination that names an observed port restricts the candidates to
//     that port's QPs;
//   - PSN continuity: A's next send PSN within a window of B's next expected
//     PSN, each direction continuous, contradicting (both known, farther
//     apart) or unknown; a contradicting direction cancels the other's
//     continuity (never a pair on one direction's PSNs when the other
//     direction's say otherwise), and among the continuous, PSNs within a few
//     messages of each other ("close") count above those merely in the window;
//   - job names: two hosts whose snapshots name different jobs never pair.
// A contradiction (a destination that is not the candidate's, another job)
// rules the candidate out. Among the rest, address evidence counts before PSN
// continuity. A QP is paired when it and its partner are each other's unique
// best, and either that best has positive evidence (an address or PSN
// continuity) or each was the other's only candidate from the start. What is
// left with several candidates and nothing to tell them apart is "ambiguous":
// never paired, never judged as a pair. Host, device, process names do not
// break ties: at scale the same names and QP numbers repeat on every host.
// A QP left without a peer whose every candidate is paired elsewhere is
// dangling by elimination (`eliminated`).
// In detail (pairing.cc):
//   - mutual QPNs first, then one-sided (a failed or never-attempted RTR);
//   - UD: a trace's address handles name the peer's port (dgid in its GID
//     table or sgid, or dlid among its LIDs); mutual aim pairs two UD QPs,
//     one-way aim does when the target created no address handle at all;
//   - each pair says how it was matched (`how`: "mutual qpn + gid + psn
//     continuity") and whether the match is unique (one candidate each way).
//
// Cost: O(N) hash lookups when destinations are known; without them, a QP
// whose QP-number pair repeats on many hosts is matched by PSN through a
// sorted index, O(N log N).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qpconnect/observe/observed.h"

namespace qpconnect {

struct ObservedPair {
  size_t a = 0;  // indexes into Observation::qps; a < b
  size_t b = 0;
  std::string how;  // "mutual qpn", "mutual qpn + gid", "mutual qpn + psn continuity", ...
  // True when each side had the other as its only candidate; false when the
  // evidence in `how` chose among several (`candidates` of them, the larger
  // side's count).
  bool unique = true;
  size_t candidates = 1;
};

// A dangling QP with no destination address whose every candidate is paired
// elsewhere: every QP numbered as its dest_qpn (not ruled out by job or
// address) is in a pair, `back` of them naming it back. Its peer is gone, or
// is one of those connected elsewhere; which one is not known, so none is
// named (Pairing::NamedBy is empty for it).
struct EliminatedQp {
  size_t qp = 0;
  size_t back = 0;      // QPs numbered as its dest_qpn that name it back
  size_t numbered = 0;  // all QPs numbered as its dest_qpn (back included)
  // The host its peer was on, by elimination too: the one host given (one
  // snapshot each, same job) that holds no QP numbered as its dest_qpn; ""
  // when not exactly one. Sound only when every host of the job was given.
  std::string host;
};

struct Pairing {
  std::vector<ObservedPair> pairs;
  // QPs whose dest_qpn names a QP not found, or one paired with another QP
  // (among them, `eliminated`).
  std::vector<size_t> dangling;
  // The dangling QPs that are so by elimination, sorted by QP.
  std::vector<EliminatedQp> eliminated;
  // QPs with no partner and no dest_qpn to look for.
  std::vector<size_t> unpaired;
  // QPs with several equally good partners (QPNs repeat across hosts and
  // devices and nothing else tells the candidates apart): left unpaired.
  std::vector<size_t> ambiguous;
  // (dangling QP, the QP its dest_qpn and destination address name), sorted,
  // for each dangling QP whose target is known and unique: a QP connected to
  // another, destroyed, or never connected. A dangling QP absent from this
  // list names a QP in no input.
  std::vector<std::pair<size_t, size_t>> named;

  // The QP dangling QP `qp` names (see `named`); nullopt when none.
  std::optional<size_t> NamedBy(size_t qp) const;
  // QP `qp`'s entry in `eliminated`; nullptr when it is not there.
  const EliminatedQp* Eliminated(size_t qp) const;
};

// Pairs every QP of `observation` (each QP in at most one pair).
Pairing PairObservedQps(const Observation& observation);

}  // namespace qpconnect
