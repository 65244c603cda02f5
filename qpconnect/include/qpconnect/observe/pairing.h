// Pairing observed QPs (observed.h) into the connections they form, so that
// each pair can be judged: by the validator's rules where both sides'
// descriptions and applied attributes are known (traces, dumps), and by the
// live rules where only kernel state is (snapshots).
//
// Rules of pairing, in order:
//   1. mutual QPNs: A.dest_qpn == B.qpn and B.dest_qpn == A.qpn, on different
//      (host, device) or the same device of one host (loopback);
//   2. ambiguity (QPNs repeat across hosts and devices) is resolved by the
//      address each side aimed at (a trace's dgid / dlid against the other's
//      sgid / LID), then by PSN continuity (a snapshot's A.sq_psn close to
//      B.rq_psn), then by host/device names;
//   3. a QP whose dest_qpn names a QP that is absent, or that is paired with
//      another QP, is "dangling"; a QP with no dest_qpn (UD, or never past
//      INIT) is "unpaired" unless a UD peer is named by a trace's send side.
// In detail (pairing.cc):
//   - one-sided: A.dest_qpn == B.qpn where B never set a dest_qpn (a failed
//     or never-attempted RTR) pairs A with B when B has no other claimant;
//   - UD: a trace's address handles name the peer's port (dgid in its GID
//     table or sgid, or dlid among its LIDs); mutual aim pairs two UD QPs,
//     one-way aim does when the target created no address handle at all;
//   - the address evidence orders candidates; a contradiction (a dgid that is
//     not the candidate's) ranks it below one with no evidence; the
//     host/device tie-break prefers another host, then another device;
//   - QPs left with several best candidates are "ambiguous".
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "qpconnect/observe/observed.h"

namespace qpconnect {

struct ObservedPair {
  size_t a = 0;  // indexes into Observation::qps; a < b
  size_t b = 0;
  std::string how;  // "mutual qpn", "mutual qpn + gid", "mutual qpn + psn continuity", ...
};

struct Pairing {
  std::vector<ObservedPair> pairs;
  // QPs whose dest_qpn names a QP not found, or one paired with another QP.
  std::vector<size_t> dangling;
  // QPs with no partner and no dest_qpn to look for.
  std::vector<size_t> unpaired;
  // QPs with several equally good partners (QPNs repeat across hosts and
  // devices and nothing else tells the candidates apart): left unpaired.
  std::vector<size_t> ambiguous;
};

// Pairs every QP of `observation` (each QP in at most one pair).
Pairing PairObservedQps(const Observation& observation);

}  // namespace qpconnect
