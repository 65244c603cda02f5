// PairObservedQps(): which observed QPs form a connection (rules in pairing.h).
//
// Candidates come from QP numbers (mutual, then one-sided) and, for UD, from
// the address handles a trace recorded. Among several candidates, evidence
// decides: the address each side aimed at (dgid/dlid against the other's GIDs
// and LIDs), PSN continuity between snapshot samples, then host/device names.
// A QP is paired only when it and its partner are each other's unique best.
#include "qpconnect/observe/pairing.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace qpconnect {
namespace {

// PSNs this close (mod 2^24) count as continuous: A's next send PSN and B's
// next expected PSN differ only by what is in flight.
constexpr uint32_t kPsnWindow = 1u << 16;

// What one side's address vector says about a candidate peer.
enum class Aim { kUnknown, kMatches, kContradicts };

struct AimResult {
  Aim aim = Aim::kUnknown;
  bool by_gid = false;  // else by LID
};

bool GidsKnown(const ObservedQp& q) {
  return q.endpoint && (!q.endpoint->gid_table.empty() || q.endpoint->path.sgid);
}

bool HasGid(const ObservedQp& q, const Gid& gid) {
  const EndpointInfo& e = *q.endpoint;
  if (e.path.sgid && e.path.sgid->gid == gid) return true;
  return std::any_of(e.gid_table.begin(), e.gid_table.end(),
                     [&](const GidEntry& g) { return g.gid == gid; });
}

bool OwnsLid(const ObservedQp& q, uint16_t lid) {
  const PortFacts& p = q.endpoint->port;
  const uint32_t span = p.lmc >= 16 ? 0xffffu : (1u << p.lmc) - 1u;
  return lid >= p.lid && lid <= p.lid + span;
}

AimResult AimAt(const AddressVector& ah, const ObservedQp& target) {
  if (ah.is_global && !IsZeroGid(ah.dgid)) {
    if (!GidsKnown(target)) return {};
    return {HasGid(target, ah.dgid) ? Aim::kMatches : Aim::kContradicts, true};
  }
  if (ah.dlid != 0 && target.endpoint && target.endpoint->port.lid != 0) {
    return {OwnsLid(target, ah.dlid) ? Aim::kMatches : Aim::kContradicts, false};
  }
  return {};
}

// A connected QP's own address vector aimed at `target`.
AimResult QpAim(const ObservedQp& from, const ObservedQp& target) {
  if (!from.applied) return {};
  return AimAt(from.applied->ah, target);
}

bool PsnClose(uint32_t a, uint32_t b) {
  return ((a - b) & kPsnMask) <= kPsnWindow || ((b - a) & kPsnMask) <= kPsnWindow;
}

// A's next send PSN against B's next expected PSN, in the latest samples.
bool PsnContinuous(const ObservedQp& a, const ObservedQp& b) {
  if (a.samples.empty() || b.samples.empty()) return false;
  const ObservedSample& sa = a.samples.back();
  const ObservedSample& sb = b.samples.back();
  return sa.sq_psn && sb.rq_psn && PsnClose(*sa.sq_psn, *sb.rq_psn);
}

// 2: other hosts; 1: one host, other devices; 0: the same device (loopback).
int NameDistance(const ObservedQp& a, const ObservedQp& b) {
  if (a.host != b.host) return 2;
  return a.device != b.device ? 1 : 0;
}

// The evidence that i and j are each other's peer; symmetric in i and j.
struct Evidence {
  int address = 0;  // +1 per direction that aims at the other, -1 per contradiction
  int psn = 0;      // directions with PSN continuity
  int names = 0;    // NameDistance
  bool gid = false;
  bool lid = false;

  std::tuple<int, int> Key() const { return {address, psn}; }
};

void AddAim(AimResult r, Evidence& e) {
  if (r.aim == Aim::kMatches) {
    ++e.address;
    (r.by_gid ? e.gid : e.lid) = true;
  } else if (r.aim == Aim::kContradicts) {
    --e.address;
  }
}

Evidence QpnEvidence(const ObservedQp& a, const ObservedQp& b) {
  Evidence e;
  AddAim(QpAim(a, b), e);
  AddAim(QpAim(b, a), e);
  e.psn = (PsnContinuous(a, b) ? 1 : 0) + (PsnContinuous(b, a) ? 1 : 0);
  e.names = NameDistance(a, b);
  return e;
}

// Any of `from`'s UD address handles aims at `target`.
AimResult UdAim(const ObservedQp& from, const ObservedQp& target) {
  AimResult best;
  for (const AddressVector& ah : from.address_handles) {
    AimResult r = AimAt(ah, target);
    if (r.aim == Aim::kMatches) return r;
    if (r.aim == Aim::kContradicts) best = r;
  }
  return best;
}

// UD: 2 when each aims at the other, 1 when one aims and the other created no
// address handle (a pure receiver), 0 otherwise. Symmetric.
Evidence UdEvidence(const ObservedQp& a, const ObservedQp& b) {
  Evidence e;
  e.names = NameDistance(a, b);
  const AimResult ab = UdAim(a, b);
  const AimResult ba = UdAim(b, a);
  const bool a_aims = ab.aim == Aim::kMatches;
  const bool b_aims = ba.aim == Aim::kMatches;
  if (a_aims && b_aims) {
    e.address = 2;
  } else if ((a_aims && b.address_handles.empty()) || (b_aims && a.address_handles.empty())) {
    e.address = 1;
  }
  e.gid = (a_aims && ab.by_gid) || (b_aims && ba.by_gid);
  e.lid = !e.gid && (a_aims || b_aims);
  return e;
}

class Pairer {
 public:
  explicit Pairer(const Observation& obs) : qps_(obs.qps), paired_(obs.qps.size(), false) {
    for (size_t i = 0; i < qps_.size(); ++i) by_qpn_[qps_[i].qpn].push_back(i);
  }

  Pairing Run() {
    const size_t n = qps_.size();
    // 1. Mutual QPNs.
    std::vector<std::vector<size_t>> mutual(n);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j : Claimed(i)) {
        if (qps_[j].dest_qpn && *qps_[j].dest_qpn == qps_[i].qpn) mutual[i].push_back(j);
      }
    }
    Resolve(mutual, QpnEvidence, "mutual qpn");
    std::vector<bool> ambiguous(n, false);
    for (size_t i = 0; i < n; ++i) {
      if (paired_[i]) continue;
      ambiguous[i] =
          std::any_of(mutual[i].begin(), mutual[i].end(), [&](size_t j) { return !paired_[j]; });
    }

    // 2. One-sided: the target never set a dest_qpn (a failed or missing RTR).
    std::vector<std::vector<size_t>> one_sided(n);
    for (size_t i = 0; i < n; ++i) {
      if (paired_[i] || ambiguous[i]) continue;
      for (size_t j : Claimed(i)) {
        if (paired_[j] || qps_[j].dest_qpn) continue;
        one_sided[i].push_back(j);
        one_sided[j].push_back(i);
      }
    }
    Resolve(one_sided, QpnEvidence, "one-sided qpn (the peer never set dest_qp_num)");

    // 3. UD by address handles.
    std::vector<std::vector<size_t>> ud(n);
    for (size_t i = 0; i < n; ++i) {
      if (paired_[i] || ambiguous[i] || !IsUd(qps_[i]) || qps_[i].address_handles.empty()) {
        continue;
      }
      for (size_t j = 0; j < n; ++j) {
        if (j == i || paired_[j] || ambiguous[j] || !IsUd(qps_[j])) continue;
        if (UdEvidence(qps_[i], qps_[j]).address <= 0) continue;
        if (std::find(ud[i].begin(), ud[i].end(), j) == ud[i].end()) {
          ud[i].push_back(j);
          ud[j].push_back(i);
        }
      }
    }
    Resolve(ud, UdEvidence, "ud address handles");

    Pairing out = std::move(result_);
    std::sort(out.pairs.begin(), out.pairs.end(),
              [](const ObservedPair& x, const ObservedPair& y) { return x.a < y.a; });
    for (size_t i = 0; i < n; ++i) {
      if (paired_[i]) continue;
      if (ambiguous[i]) {
        out.ambiguous.push_back(i);
      } else if (qps_[i].dest_qpn) {
        out.dangling.push_back(i);
      } else {
        out.unpaired.push_back(i);
      }
    }
    return out;
  }

 private:
  static bool IsUd(const ObservedQp& q) { return q.transport == Transport::kUd; }

  // The QPs (other than i) whose QPN i's dest_qpn names.
  std::vector<size_t> Claimed(size_t i) const {
    std::vector<size_t> out;
    if (!qps_[i].dest_qpn) return out;
    auto it = by_qpn_.find(*qps_[i].dest_qpn);
    if (it == by_qpn_.end()) return out;
    for (size_t j : it->second) {
      if (j != i) out.push_back(j);
    }
    return out;
  }

  struct Choice {
    size_t j = 0;
    Evidence evidence;
    bool by_names = false;  // the host/device tie-break decided
  };

  // i's unique best unpaired candidate, if any.
  template <typename EvidenceFn>
  std::optional<Choice> Best(size_t i, const std::vector<size_t>& candidates,
                             EvidenceFn evidence) const {
    std::vector<Choice> best;
    for (size_t j : candidates) {
      if (paired_[j]) continue;
      const Evidence e = evidence(qps_[i], qps_[j]);
      if (!best.empty() && e.Key() < best.front().evidence.Key()) continue;
      if (!best.empty() && best.front().evidence.Key() < e.Key()) best.clear();
      best.push_back({j, e, false});
    }
    if (best.empty()) return std::nullopt;
    if (best.size() == 1) return best.front();
    int top = -1;
    for (const Choice& c : best) top = std::max(top, c.evidence.names);
    std::optional<Choice> unique;
    for (const Choice& c : best) {
      if (c.evidence.names != top) continue;
      if (unique) return std::nullopt;
      unique = c;
    }
    unique->by_names = true;
    return unique;
  }

  // Pairs mutual unique best candidates until nothing changes.
  template <typename EvidenceFn>
  void Resolve(const std::vector<std::vector<size_t>>& candidates, EvidenceFn evidence,
               const std::string& how) {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < qps_.size(); ++i) {
        if (paired_[i] || candidates[i].empty()) continue;
        std::optional<Choice> ci = Best(i, candidates[i], evidence);
        if (!ci) continue;
        std::optional<Choice> cj = Best(ci->j, candidates[ci->j], evidence);
        if (!cj || cj->j != i) continue;
        paired_[i] = paired_[ci->j] = true;
        changed = true;
        std::string text = how;
        if (ci->evidence.gid) {
          text += " + gid";
        } else if (ci->evidence.lid) {
          text += " + lid";
        }
        if (ci->evidence.psn > 0) text += " + psn continuity";
        if (ci->by_names || cj->by_names) text += " + host/device names";
        result_.pairs.push_back({std::min(i, ci->j), std::max(i, ci->j), std::move(text)});
      }
    }
  }

  const std::vector<ObservedQp>& qps_;
  std::vector<bool> paired_;
  std::unordered_map<uint32_t, std::vector<size_t>> by_qpn_;
  Pairing result_;
};

}  // namespace

Pairing PairObservedQps(const Observation& observation) { return Pairer(observation).Run(); }

}  // namespace qpconnect
