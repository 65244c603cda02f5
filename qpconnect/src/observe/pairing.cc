// SPDX-License-Identifier: MIT
// PairObservedQps(): which observed QPs form a connection (rules in pairing.h).
//
// Candidates come from QP numbers (mutual, then one-sided) and, for UD, from
// the address handles a trace recorded. A destination address that names an
// observed port narrows a QP's candidates to that port's QPs by hash lookup;
// without one, a QP-number pair that repeats on many hosts is searched by PSN
// through a sorted index. Each candidate is weighed by the identities (an
// address matching or contradicting, PSN continuity, the job); contradicted
// candidates are dropped. A QP is paired only when it and its partner are
// each other's unique best, by positive evidence or as each other's only
// candidate.
#include "qpconnect/observe/pairing.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "group_index.h"
#include "pairing_evidence.h"
#include "pairing_identities.h"
#include "qpconnect/observe/job_hosts.h"

namespace qpconnect {
namespace {

using namespace pairing_detail;  // NOLINT: the parts of this file split out

// The listed hosts of `obs` that no QP's or snapshot's host names.
size_t SilentHosts(const Observation& obs) {
  if (obs.expected_hosts.empty()) return 0;
  std::vector<std::string> seen;
  for (const ObservedHost& h : obs.hosts) seen.push_back(h.name);
  std::string last;
  for (const ObservedQp& q : obs.qps) {
    if (q.host != last) seen.push_back(last = q.host);
  }
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  return HostsNotIn(obs.expected_hosts, seen).size();
}

class Pairer {
 public:
  explicit Pairer(const Observation& obs)
      : qps_(obs.qps),
        hosts_(obs.hosts),
        silent_hosts_(SilentHosts(obs)),
        ids_(obs),
        paired_(obs.qps.size(), false) {
    facts_.reserve(qps_.size());
    for (size_t i = 0; i < qps_.size(); ++i) {
      Facts f = FactsOf(qps_[i]);
      f.job = ids_.Job(i);
      f.has_dest = ids_.HasDest(i);
      facts_.push_back(f);
    }
  }

  Pairing Run() {
    const size_t n = qps_.size();
    // 1. Mutual QPNs.
    Lists mutual = MutualCandidates();
    Resolve(mutual, "mutual qpn");
    std::vector<bool> ambiguous(n, false);
    for (size_t i = 0; i < n; ++i) {
      if (paired_[i]) continue;
      const std::span<const Candidate> of = mutual.Of(i);
      ambiguous[i] =
          std::any_of(of.begin(), of.end(), [&](const Candidate& c) { return !paired_[c.j]; }) ||
          UnpairedInLargeGroup(i);
    }

    // 2. One-sided: the target never set a dest_qpn (a failed or missing RTR).
    Lists one_sided = OneSidedCandidates(ambiguous);
    Resolve(one_sided, "one-sided qpn (the peer never set dest_qp_num)");

    // 3. UD by address handles.
    Lists ud = UdCandidates(ambiguous);
    Resolve(ud, "ud address handles");

    Pairing out = std::move(result_);
    std::sort(out.pairs.begin(), out.pairs.end(),
              [](const ObservedPair& x, const ObservedPair& y) { return x.a < y.a; });
    for (size_t i = 0; i < n; ++i) {
      if (paired_[i]) continue;
      if (!ambiguous[i] && qps_[i].dest_qpn) {
        // Dangling: whom does it name? Several equally likely: ambiguous,
        // unless all of them are paired elsewhere.
        std::optional<size_t> named;
        if (!NameTarget(i, &named)) {
          if (std::optional<EliminatedQp> e = Eliminate(i)) {
            out.eliminated.push_back(std::move(*e));
          } else {
            ambiguous[i] = true;
          }
        } else if (named) {
          out.named.push_back({i, *named});
        }
      }
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
  // Candidate lists, symmetric (j is i's candidate iff i is j's), and each
  // QP's count of candidates before any was searched by PSN. Built as a list
  // of edges, then laid out in one array (a million QPs, a million small
  // vectors otherwise).
  class Lists {
   public:
    Lists() = default;
    explicit Lists(size_t n) : total(n, 0), n_(n) {}

    void Add(size_t i, size_t j, const Evidence& e) {
      edges_.push_back(
          {static_cast<uint32_t>(std::min(i, j)), static_cast<uint32_t>(std::max(i, j)), e});
    }

    // Lays the lists out and drops repeated edges (one found from each end);
    // call once, after the Adds. Each QP's list is short: sorted on its own,
    // not the millions of edges at once.
    void Finish() {
      offset_.assign(n_ + 1, 0);
      for (const Edge& e : edges_) {
        ++offset_[e.i + 1];
        ++offset_[e.j + 1];
      }
      for (size_t k = 0; k < n_; ++k) offset_[k + 1] += offset_[k];
      candidates_.resize(edges_.size() * 2);
      std::vector<size_t> at(offset_.begin(), offset_.end() - 1);
      for (const Edge& e : edges_) {
        candidates_[at[e.i]++] = {e.j, e.evidence};
        candidates_[at[e.j]++] = {e.i, e.evidence};
      }
      edges_.clear();
      edges_.shrink_to_fit();
      at.clear();
      at.shrink_to_fit();
      size_t out = 0;
      size_t begin = 0;
      for (size_t k = 0; k < n_; ++k) {
        const size_t end = offset_[k + 1];
        std::sort(candidates_.begin() + static_cast<ptrdiff_t>(begin),
                  candidates_.begin() + static_cast<ptrdiff_t>(end),
                  [](const Candidate& x, const Candidate& y) { return x.j < y.j; });
        offset_[k] = out;
        for (size_t c = begin; c < end; ++c) {
          if (out == offset_[k] || candidates_[out - 1].j != candidates_[c].j) {
            candidates_[out++] = candidates_[c];
          }
        }
        begin = end;
      }
      offset_[n_] = out;
      candidates_.resize(out);
    }

    bool empty() const { return candidates_.empty(); }
    std::span<const Candidate> Of(size_t i) const {
      if (offset_.empty()) return {};
      return {candidates_.data() + offset_[i], offset_[i + 1] - offset_[i]};
    }

    std::vector<size_t> total;

   private:
    struct Edge {  // 16 bytes: millions of them are sorted
      uint32_t i = 0;
      uint32_t j = 0;
      Evidence evidence;
    };
    size_t n_ = 0;
    std::vector<Edge> edges_;
    std::vector<size_t> offset_;
    std::vector<Candidate> candidates_;
  };

  static bool IsUd(const ObservedQp& q) { return q.transport == Transport::kUd; }

  // Addresses each way, the job, and each direction's PSNs: continuous,
  // contradicting or unknown. A contradicting direction cancels what the
  // other's continuity says (two orphans' PSNs may fall within the window one
  // way by chance); it rules nothing out (a real pair with a PSN fault is
  // still paired when each is the other's only candidate).
  Evidence Weigh(size_t i, size_t j) const { return Weigh(i, facts_[i], j, facts_[j]); }

  // Weigh() with the QPs' facts at hand (a group's index holds copies).
  Evidence Weigh(size_t i, const Facts& fi, size_t j, const Facts& fj) const {
    Evidence e;
    if (fi.has_dest || fj.has_dest) {
      for (const AimResult r : {ids_.Aims(i, j), ids_.Aims(j, i)}) {
        if (r.aim == Aim::kMatches) {
          ++e.address;
          (r.by_gid ? e.gid : e.lid) = true;
        } else if (r.aim == Aim::kContradicts) {
          e.contradicted = true;
        }
      }
    }
    e.contradicted |= fi.job != 0 && fj.job != 0 && fi.job != fj.job;  // another job
    if (e.contradicted) return e;
    const PsnState ij = Direction(fi, fj);
    const PsnState ji = Direction(fj, fi);
    if (ij == PsnState::kContradicts || ji == PsnState::kContradicts) return e;
    e.psn = static_cast<int8_t>((ij >= PsnState::kContinuous) + (ji >= PsnState::kContinuous));
    e.close = static_cast<int8_t>((ij == PsnState::kClose) + (ji == PsnState::kClose));
    return e;
  }

  // Adds the edge i - j, unless contradicted; true when it is added.
  bool Link(Lists& lists, size_t i, size_t j) const {
    const Evidence e = Weigh(i, j);
    if (e.contradicted) return false;
    lists.Add(i, j, e);
    return true;
  }

  // The QPs on the devices i's destination names with QP number `qpn`;
  // nullopt when i's destination names no observed device.
  std::optional<std::vector<size_t>> OnTargets(size_t i, uint32_t qpn) const {
    if (!facts_[i].has_dest) return std::nullopt;
    const std::vector<uint32_t>& targets = ids_.Targets(ids_.DestAt(i));
    if (targets.empty()) return std::nullopt;
    if (!by_dev_qpn_.built()) {  // only QPs with a known destination need it
      by_dev_qpn_.Build(qps_.size(), [&](size_t k) -> std::optional<uint64_t> {
        return DevKey(ids_.Dev(k), qps_[k].qpn);
      });
    }
    std::vector<size_t> out;
    for (uint32_t dev : targets) {
      for (size_t j : by_dev_qpn_.Find(DevKey(dev, qpn))) {
        if (j != i) out.push_back(j);
      }
    }
    return out;
  }

  // The QPs whose (qpn, dest_qpn) is i's reversed.
  std::span<const size_t> MutualGroup(size_t i) const {
    const ObservedQp& q = qps_[i];
    if (!q.dest_qpn) return {};
    return ByPair().Find(PairKey(*q.dest_qpn, q.qpn));
  }

  // QPs by (qpn, dest_qpn); built when first needed (only QPs without a
  // known destination need it).
  const GroupIndex& ByPair() const {
    if (!by_pair_.built()) {
      by_pair_.Build(qps_.size(), [&](size_t k) -> std::optional<uint64_t> {
        if (!qps_[k].dest_qpn) return std::nullopt;
        return PairKey(qps_[k].qpn, *qps_[k].dest_qpn);
      });
    }
    return by_pair_;
  }

  // The QPs numbered `qpn`, wherever they are.
  std::span<const size_t> Numbered(uint32_t qpn) const {
    if (!by_qpn_.built()) {
      by_qpn_.Build(qps_.size(), [&](size_t k) -> std::optional<uint64_t> { return qps_[k].qpn; });
    }
    return by_qpn_.Find(qpn);
  }

  // A large group's members by their last rq_psn, with their facts: found
  // by PSN and weighed without reaching into the QP table.
  struct Indexed {
    Facts facts;
    uint32_t j = 0;
  };

  // Members j of a large group whose last rq_psn is within the window of
  // `sq_psn`, through the group's index sorted by rq_psn (built once):
  // visit(j, facts of j) for each.
  template <typename Visit>
  void PsnNeighbours(uint64_t group_key, std::span<const size_t> group, uint32_t sq_psn,
                     Visit visit) {
    auto [it, inserted] = psn_index_.try_emplace(group_key);
    std::vector<Indexed>& index = it->second;
    if (inserted) {
      index.reserve(group.size());
      for (size_t j : group) {
        if (facts_[j].has_rq) index.push_back({facts_[j], static_cast<uint32_t>(j)});
      }
      std::sort(index.begin(), index.end(), [](const Indexed& x, const Indexed& y) {
        return x.facts.rq != y.facts.rq ? x.facts.rq < y.facts.rq : x.j < y.j;
      });
    }
    // [sq - W, sq + W] mod 2^24, as one or two ranges.
    auto scan = [&](uint32_t lo, uint32_t hi) {
      auto from = std::partition_point(index.begin(), index.end(),
                                       [lo](const Indexed& x) { return x.facts.rq < lo; });
      for (auto k = from; k != index.end() && k->facts.rq <= hi; ++k) visit(k->j, k->facts);
    };
    const uint32_t lo = (sq_psn - kPsnWindow) & kPsnMask;
    const uint32_t hi = (sq_psn + kPsnWindow) & kPsnMask;
    if (lo <= hi) {
      scan(lo, hi);
    } else {
      scan(lo, kPsnMask);
      scan(0, hi);
    }
  }

  // Candidates by mutual QP numbers: on the devices a QP's destination
  // names, else among the QPs whose (qpn, dest_qpn) is its reversed (group by
  // group, each group's reversed one looked up once).
  Lists MutualCandidates() {
    const size_t n = qps_.size();
    Lists lists(n);
    std::vector<size_t> found;
    bool blind = false;  // a QP whose destination names no observed device
    for (size_t i = 0; i < n; ++i) {
      const ObservedQp& q = qps_[i];
      if (!q.dest_qpn) continue;
      std::optional<std::vector<size_t>> on = OnTargets(i, *q.dest_qpn);
      if (!on) {
        blind = true;
        continue;
      }
      found.clear();
      for (size_t j : *on) {
        if (qps_[j].dest_qpn == q.qpn) found.push_back(j);
      }
      LinkAll(lists, i, found);
    }
    if (!blind) {
      lists.Finish();
      return lists;
    }
    ByPair().ForEachGroup([&](uint64_t key, std::span<const size_t> members) {
      const std::span<const size_t> group = by_pair_.Find(Reversed(key));
      if (group.empty()) return;
      for (size_t i : members) {
        if (OnTargetsKnown(i)) continue;  // done above
        if (group.size() > kScanLimit) {
          LinkLarge(lists, i, key, group);
          continue;
        }
        found.clear();
        for (size_t j : group) {
          if (j != i) found.push_back(j);
        }
        LinkAll(lists, i, found);
      }
    });
    lists.Finish();
    return lists;
  }

  // Links i to the candidates in `found` the identities do not rule out.
  void LinkAll(Lists& lists, size_t i, const std::vector<size_t>& found) const {
    lists.total[i] = static_cast<size_t>(
        std::count_if(found.begin(), found.end(), [&](size_t j) { return Link(lists, i, j); }));
  }

  // i's candidates in a group too large to enumerate, whose key is i's
  // (qpn, dest_qpn) reversed: every member counts as a candidate, and only
  // those with evidence, found by PSN, are listed (the rest can never be a
  // best; the group's unpaired members make i ambiguous all the same,
  // UnpairedInLargeGroup).
  void LinkLarge(Lists& lists, size_t i, uint64_t key, std::span<const size_t> group) {
    const ObservedQp& q = qps_[i];
    // i is in its own reversed group only when its qpn is its dest_qpn.
    const bool self =
        q.qpn == *q.dest_qpn && std::find(group.begin(), group.end(), i) != group.end();
    lists.total[i] = group.size() - (self ? 1 : 0);
    const Facts& fi = facts_[i];
    if (!fi.has_sq) return;
    PsnNeighbours(Reversed(key), group, fi.sq, [&](size_t j, const Facts& fj) {
      if (j == i) return;
      const Evidence e = Weigh(i, fi, j, fj);
      if (!e.contradicted && e.Positive()) lists.Add(i, j, e);
    });
  }

  // i is unpaired and its mutual group is too large to enumerate and still
  // has unpaired members: nothing told it and them apart.
  bool UnpairedInLargeGroup(size_t i) const {
    if (OnTargetsKnown(i)) return false;
    const std::span<const size_t> group = MutualGroup(i);
    if (group.size() <= kScanLimit) return false;
    return std::any_of(group.begin(), group.end(), [&](size_t j) { return j != i && !paired_[j]; });
  }

  bool OnTargetsKnown(size_t i) const {
    return facts_[i].has_dest && !ids_.Targets(ids_.DestAt(i)).empty();
  }

  Lists OneSidedCandidates(const std::vector<bool>& ambiguous) {
    const size_t n = qps_.size();
    // Nobody to claim: no QP without a dest_qpn (the common case at scale).
    if (std::all_of(qps_.begin(), qps_.end(), [](const ObservedQp& q) { return q.dest_qpn; })) {
      return {};
    }
    Lists lists(n);
    for (size_t i = 0; i < n; ++i) {
      const ObservedQp& q = qps_[i];
      if (paired_[i] || ambiguous[i] || !q.dest_qpn) continue;
      std::vector<size_t> pool;
      if (std::optional<std::vector<size_t>> on = OnTargets(i, *q.dest_qpn)) {
        pool = std::move(*on);
      } else {
        const std::span<const size_t> numbered = Numbered(*q.dest_qpn);
        if (numbered.size() > kScanLimit) continue;  // nothing tells them apart
        pool.assign(numbered.begin(), numbered.end());
      }
      for (size_t j : pool) {
        if (j == i || paired_[j] || qps_[j].dest_qpn) continue;
        if (!Link(lists, i, j)) continue;
        ++lists.total[i];
        ++lists.total[j];
      }
    }
    lists.Finish();
    return lists;
  }

  Lists UdCandidates(const std::vector<bool>& ambiguous) {
    const size_t n = qps_.size();
    std::vector<size_t> ud;
    for (size_t i = 0; i < n; ++i) {
      if (!paired_[i] && !ambiguous[i] && IsUd(qps_[i])) ud.push_back(i);
    }
    if (ud.empty()) return {};
    Lists lists(n);
    for (size_t i : ud) {
      if (qps_[i].address_handles.empty()) continue;
      for (size_t j : ud) {
        if (j == i) continue;
        const Evidence e = UdEvidence(i, j);
        if (e.address <= 0) continue;
        // Both aim: seen from each side, counted from the first.
        if (j < i && !qps_[j].address_handles.empty()) continue;
        lists.Add(i, j, e);
        ++lists.total[i];
        ++lists.total[j];
      }
    }
    lists.Finish();
    return lists;
  }

  // Any of `from`'s UD address handles aims at `to`.
  AimResult UdAim(size_t from, size_t to) const {
    AimResult best;
    for (const AddressVector& ah : qps_[from].address_handles) {
      AimResult r = ids_.AimsAt(DestOfAh(ah), to);
      if (r.aim == Aim::kMatches) return r;
      if (r.aim == Aim::kContradicts) best = r;
    }
    return best;
  }

  // UD: 2 when each aims at the other, 1 when one aims and the other created
  // no address handle (a pure receiver), 0 otherwise. Symmetric.
  Evidence UdEvidence(size_t a, size_t b) const {
    Evidence e;
    const AimResult ab = UdAim(a, b);
    const AimResult ba = UdAim(b, a);
    const bool a_aims = ab.aim == Aim::kMatches;
    const bool b_aims = ba.aim == Aim::kMatches;
    if (a_aims && b_aims) {
      e.address = 2;
    } else if ((a_aims && qps_[b].address_handles.empty()) ||
               (b_aims && qps_[a].address_handles.empty())) {
      e.address = 1;
    }
    e.gid = (a_aims && ab.by_gid) || (b_aims && ba.by_gid);
    e.lid = !e.gid && (a_aims || b_aims);
    return e;
  }

  // i's unique best unpaired candidate, if any.
  std::optional<Candidate> Best(size_t i, const Lists& lists) const {
    std::optional<Candidate> best;
    bool tie = false;
    for (const Candidate& c : lists.Of(i)) {
      if (paired_[c.j]) continue;
      if (best && c.evidence.Key() < best->evidence.Key()) continue;
      if (best && c.evidence.Key() == best->evidence.Key()) {
        tie = true;
        continue;
      }
      best = c;
      tie = false;
    }
    if (!best || tie) return std::nullopt;
    // Without positive evidence only the one and only candidate will do.
    if (!best->evidence.Positive() && lists.total[i] > 1) return std::nullopt;
    return best;
  }

  // Pairs mutual unique best candidates until nothing changes: a pair made
  // may leave its other candidates a unique best.
  void Resolve(const Lists& lists, const std::string& how) {
    if (lists.empty()) return;  // no candidates at all
    std::deque<size_t> work;
    std::vector<bool> queued(qps_.size(), false);
    for (size_t i = 0; i < qps_.size(); ++i) {
      if (!paired_[i] && !lists.Of(i).empty()) {
        work.push_back(i);
        queued[i] = true;
      }
    }
    while (!work.empty()) {
      const size_t i = work.front();
      work.pop_front();
      queued[i] = false;
      if (paired_[i]) continue;
      std::optional<Candidate> ci = Best(i, lists);
      if (!ci) continue;
      const size_t j = ci->j;
      std::optional<Candidate> cj = Best(j, lists);
      if (!cj || cj->j != i) continue;
      if (!cj->evidence.Positive() && lists.total[j] > 1) continue;
      paired_[i] = paired_[j] = true;
      ObservedPair pair{std::min(i, j), std::max(i, j), How(how, ci->evidence)};
      pair.candidates = std::max({lists.total[i], lists.total[j], size_t{1}});
      pair.unique = lists.total[i] <= 1 && lists.total[j] <= 1;
      result_.pairs.push_back(std::move(pair));
      for (size_t k : {i, j}) {
        for (const Candidate& c : lists.Of(k)) {
          if (!paired_[c.j] && !queued[c.j]) {
            work.push_back(c.j);
            queued[c.j] = true;
          }
        }
      }
    }
  }

  static std::string How(const std::string& how, const Evidence& e) {
    std::string text = how;
    if (e.gid) {
      text += " + gid";
    } else if (e.lid) {
      text += " + lid";
    }
    if (e.psn > 0) text += " + psn continuity";
    return text;
  }

  // The QP dangling QP i's dest_qpn names, among those its destination
  // allows: one pointing back first, then on another device or host. False
  // when several fit equally (ambiguous); true with nullopt when none does.
  bool NameTarget(size_t i, std::optional<size_t>* named) const {
    const ObservedQp& x = qps_[i];
    std::vector<size_t> pool;
    if (std::optional<std::vector<size_t>> on = OnTargets(i, *x.dest_qpn)) {
      pool = std::move(*on);
    } else {
      const std::span<const size_t> numbered = Numbered(*x.dest_qpn);
      pool.assign(numbered.begin(), numbered.end());
      std::erase(pool, i);
      // A QP number held on many hosts, and no destination to choose by.
      if (pool.size() > kScanLimit) return false;
    }
    int rank = -1;
    bool tie = false;
    for (size_t j : pool) {
      if (ids_.Aims(i, j).aim == Aim::kContradicts || ids_.OtherJob(i, j)) continue;
      const ObservedQp& y = qps_[j];
      const int r = (y.dest_qpn == x.qpn ? 2 : 0) + (y.device != x.device || y.host != x.host);
      if (r > rank) {
        rank = r;
        *named = j;
        tie = false;
      } else if (r == rank) {
        tie = true;
      }
    }
    return !tie;
  }

  // Dangling QP i (no destination address) by elimination: every QP
  // numbered as its dest_qpn, not ruled out, is paired; nullopt when one is
  // not, or none names it back.
  std::optional<EliminatedQp> Eliminate(size_t i) {
    const ObservedQp& x = qps_[i];
    if (OnTargetsKnown(i)) return std::nullopt;
    EliminatedQp e;
    e.qp = i;
    for (size_t j : Numbered(*x.dest_qpn)) {
      if (j == i || ids_.Aims(i, j).aim == Aim::kContradicts || ids_.OtherJob(i, j)) continue;
      if (!paired_[j]) return std::nullopt;
      ++e.numbered;
      e.back += qps_[j].dest_qpn == x.qpn;
    }
    if (e.back == 0) return std::nullopt;
    e.host = HostWithout(*x.dest_qpn, i);
    return e;
  }

  // The one host given (of QP i's job) that holds no QP numbered `qpn`; ""
  // when none or several do not, or when a listed host sent nothing.
  std::string HostWithout(uint32_t qpn, size_t i) {
    std::string_view job;
    for (const ObservedHost& h : hosts_) {
      if (h.name == qps_[i].host) job = h.job;
    }
    auto [it, inserted] = host_without_.try_emplace({qpn, std::string(job)});
    if (!inserted) return it->second;
    std::unordered_map<std::string_view, bool> holds;  // host given -> holds qpn
    for (const ObservedHost& h : hosts_) {
      if (job.empty() || h.job.empty() || h.job == job) holds.emplace(h.name, false);
    }
    for (size_t j : Numbered(qpn)) {
      if (auto k = holds.find(qps_[j].host); k != holds.end()) k->second = true;
    }
    // A listed host that sent no snapshot may hold it too: no one host is
    // then the only one without it.
    if (silent_hosts_ > 0) return it->second;
    const std::string_view* without = nullptr;
    for (const auto& [name, held] : holds) {
      if (held) continue;
      if (without != nullptr) return it->second;  // several
      without = &name;
    }
    if (without != nullptr) it->second = std::string(*without);
    return it->second;
  }

  const std::vector<ObservedQp>& qps_;
  const std::vector<ObservedHost>& hosts_;
  // Hosts of the job's list (Observation::expected_hosts) no input names:
  // their QPs are unseen, so elimination names no host while there are any.
  size_t silent_hosts_ = 0;
  Identities ids_;
  std::vector<Facts> facts_;  // each QP's, for Weigh
  std::vector<bool> paired_;
  mutable GroupIndex by_dev_qpn_;  // (device, qpn); built when first needed
  mutable GroupIndex by_qpn_;      // qpn; built when first needed
  mutable GroupIndex by_pair_;     // (qpn, dest_qpn); built when first needed
  std::unordered_map<uint64_t, std::vector<Indexed>> psn_index_;
  std::map<std::pair<uint32_t, std::string>, std::string> host_without_;  // HostWithout()
  Pairing result_;
};

}  // namespace

std::optional<size_t> Pairing::NamedBy(size_t qp) const {
  auto it = std::lower_bound(named.begin(), named.end(), std::pair<size_t, size_t>{qp, 0});
  if (it == named.end() || it->first != qp) return std::nullopt;
  return it->second;
}

const EliminatedQp* Pairing::Eliminated(size_t qp) const {
  auto it = std::lower_bound(eliminated.begin(), eliminated.end(), qp,
                             [](const EliminatedQp& e, size_t q) { return e.qp < q; });
  return it == eliminated.end() || it->qp != qp ? nullptr : &*it;
}

Pairing PairObservedQps(const Observation& observation) { return Pairer(observation).Run(); }

}  // namespace qpconnect
