// SPDX-License-Identifier: MIT
#include "qpconnect/observe/trace_judge.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "qpconnect/observe/trace_reader.h"
#include "qpconnect/validate.h"
#include "qpconnect/verbs/qp_attr_table.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/qp_state_table.h"
#include "qpconnect/verbs/transition.h"

namespace qpconnect::trace {
namespace {

using verbs::QpState;

QpState StateOf(const std::string& name) {
  for (QpState s : {QpState::kReset, QpState::kInit, QpState::kRtr, QpState::kRts, QpState::kSqd,
                    QpState::kSqe, QpState::kErr}) {
    if (name == verbs::QpStateName(s)) return s;
  }
  return QpState::kUnknown;
}

// The QP state machine: can a QP go from `from` to `to`? The state table
// (verbs/qp_state_table.h) knows every move; from ERR or an unknown state
// the judge says nothing (the call that led there is what it explains).
bool ValidTransition(QpState from, QpState to) {
  if (from == QpState::kUnknown || from == QpState::kErr) return true;
  return verbs::IsStateTransition(from, to);
}

// The request as the program made it, for the verbs layer's checks.
verbs::ModifyRequest ToRequest(const ObservedTransition& t) {
  verbs::ModifyRequest r;
  r.from = StateOf(t.from);
  r.to = StateOf(t.to);
  r.mask = t.mask;
  r.attr.qp_state = verbs::ToIbvState(r.to);
  // Every value the trace holds, whatever the mask: CheckRequest reads only
  // the bits the mask sends.
  verbs::ToIbvAttr(t.attrs, verbs::QpAttrsMask(), r.attr);
  return r;
}

// The mask bits that carry a finding's attribute (0: none, e.g. qp_type).
int MaskBitsOf(const std::string& attribute) {
  // A plan value the validator names by its ibv_qp_attr field (path_mtu,
  // rq_psn, timeout, qkey, ...): the attribute table's bit.
  constexpr int kByField = ~(IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_AV);
  if (const verbs::QpAttrInfo* row = verbs::FindQpAttrByField(attribute.c_str());
      row != nullptr && (row->bit & verbs::QpAttrsMask() & kByField) != 0) {
    return row->bit;
  }
  // The validator's other names: the P_Key, facts of the port, and the parts
  // of the address vector.
  struct Entry {
    const char* attribute;
    int bits;
  };
  static constexpr Entry kOthers[] = {
      {"pkey", IBV_QP_PKEY_INDEX},
      {"port_num", IBV_QP_PORT | IBV_QP_AV},
      {"port_state", IBV_QP_PORT | IBV_QP_AV},
      {"link_layer", IBV_QP_AV},
      {"lid", IBV_QP_AV},
      {"dlid", IBV_QP_AV},
      {"sl", IBV_QP_AV},
      {"src_path_bits", IBV_QP_AV},
      {"is_global", IBV_QP_AV},
      {"sgid_index", IBV_QP_AV},
      {"dgid", IBV_QP_AV},
      {"hop_limit", IBV_QP_AV},
      {"flow_label", IBV_QP_AV},
      {"traffic_class", IBV_QP_AV},
  };
  for (const Entry& e : kOthers) {
    if (attribute == e.attribute) return e.bits;
  }
  return 0;
}

// Attributes that only exist in a plan (what a side applies), as opposed to
// facts of its port and description.
bool IsPlanAttribute(const std::string& attribute) {
  return (MaskBitsOf(attribute) & ~(IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_QKEY)) != 0 &&
         attribute != "port_state" && attribute != "link_layer" && attribute != "lid";
}

bool AttemptedRtr(const ObservedQp& q) {
  const bool rtr =
      std::any_of(q.transitions.begin(), q.transitions.end(),
                  [](const ObservedTransition& t) { return t.to == "RTR" || t.to == "RTS"; });
  return rtr || (q.transport == Transport::kUd && !q.address_handles.empty());
}

// One side of a pair, as the validator will see it.
struct Side {
  const ObservedQp* qp = nullptr;
  Direction dir = Direction::kLocal;
  const char* name = "local";
  EndpointInfo ep;
  std::optional<ConnectionPlan> plan;
  int mask = 0;
};

Side Prepare(const ObservedQp& q, Direction dir) {
  Side s;
  s.qp = &q;
  s.dir = dir;
  s.name = dir == Direction::kLocal ? "local" : "remote";
  s.ep = *q.endpoint;
  s.mask = AppliedMask(q);
  if (AttemptedRtr(q) && q.applied) {
    ConnectionPlan plan;
    plan.transport = *q.transport;
    plan.qps = {*q.applied};
    s.plan = std::move(plan);
  }
  return s;
}

// Fills in what x's trace cannot show from its peer y, saying so in `notes`.
void Fill(Side& x, const Side& y, std::vector<std::string>& notes) {
  const std::string who = std::string("the ") + x.name + " QP";
  const bool ud = x.ep.transport == Transport::kUd;
  const std::optional<uint32_t> peer_rq_psn =
      y.plan && (y.mask & IBV_QP_RQ_PSN) ? std::optional(y.plan->qps[0].rq_psn) : std::nullopt;
  if (!ud && !(x.mask & IBV_QP_SQ_PSN) && peer_rq_psn) {
    x.ep.qps[0].psn = *peer_rq_psn;
    if (x.plan) x.plan->qps[0].sq_psn = *peer_rq_psn;
    notes.push_back(who + " never set sq_psn (no RTS in its trace): taken as the PSN the " +
                    y.name + " side expects, so psn-mismatch is not judged for it");
  }
  if (x.plan && ud) x.plan->qps[0].dest_qp_num = y.qp->qpn;
  if (!x.plan) {
    if (y.plan && y.plan->qps[0].ah.is_global) {
      for (const GidEntry& g : x.ep.gid_table) {
        if (g.gid == y.plan->qps[0].ah.dgid) {
          x.ep.path.sgid = g;
          x.ep.path.use_grh = true;
        }
      }
    }
    notes.push_back(who + " never attempted RTR: its attributes are derived as qpconnect " +
                    "would set them, and findings on them are left out");
  }
}

bool Relevant(const Finding& f, Direction side, int mask) {
  if (f.severity == Severity::kInfo || f.unchecked) return false;
  if (f.direction != side && f.direction != Direction::kBoth) return false;
  return (MaskBitsOf(f.attribute) & mask) != 0;
}

FailedTransition Explain(size_t qp_index, const ObservedQp& q, size_t i,
                         const std::vector<Finding>& findings, Direction side) {
  const ObservedTransition& t = q.transitions[i];
  FailedTransition f;
  f.qp = qp_index;
  f.transition = i;
  const QpState from = StateOf(t.from);
  const QpState to = StateOf(t.to);
  const verbs::ModifyRequest request = ToRequest(t);
  if (!t.to.empty() && !ValidTransition(from, to)) {
    f.mask_problem = t.from + "->" + t.to + " is not a transition of the QP state machine " +
                     "(ibv_modify_qp(3))";
  } else if (q.transport && verbs::FindTransition(*q.transport, from, to)) {
    // Every move the state table has a row for, by its (from, to) pair.
    f.mask_problem = verbs::CheckRequest(*q.transport, request);
  }
  if (q.transport) f.errno_hint = verbs::ExplainModifyErrno(t.sys_errno, *q.transport, request);
  if (f.errno_hint.empty() && t.sys_errno == ENODATA && (t.mask & IBV_QP_AV) &&
      t.attrs.ah.is_global) {
    f.errno_hint = "ENODATA: the kernel has no GID at sgid_index " +
                   std::to_string(t.attrs.ah.sgid_index) + " of the port (an empty table entry)";
  }
  for (const Finding& finding : findings) {
    if (Relevant(finding, side, t.mask)) f.causes.push_back(finding);
  }
  return f;
}

void CollectFailures(size_t qp_index, const ObservedQp& q, const std::vector<Finding>& findings,
                     Direction side, std::vector<FailedTransition>& out) {
  for (size_t i = 0; i < q.transitions.size(); ++i) {
    if (q.transitions[i].result != 0) out.push_back(Explain(qp_index, q, i, findings, side));
  }
}

PairVerdict JudgePair(const Observation& obs, const ObservedPair& pair) {
  PairVerdict v;
  v.pair = pair;
  const ObservedQp& a = obs.qps[pair.a];
  const ObservedQp& b = obs.qps[pair.b];
  if (!a.endpoint || !b.endpoint || !a.applied || !b.applied) {
    v.notes.push_back("not judged: the validator knows RC, UC and UD QPs, not " +
                      (a.endpoint ? b.type_name : a.type_name));
    CollectFailures(pair.a, a, {}, Direction::kLocal, v.failures);
    CollectFailures(pair.b, b, {}, Direction::kRemote, v.failures);
    return v;
  }
  Side l = Prepare(a, Direction::kLocal);
  Side r = Prepare(b, Direction::kRemote);
  Fill(l, r, v.notes);
  Fill(r, l, v.notes);
  if (l.ep.transport == Transport::kUd && (l.plan || r.plan)) {
    v.notes.push_back(
        "UD: the remote QPN, Q_Key and size of each send travel in work requests "
        "(ibv_post_send, the data path), which a trace does not see: each side is "
        "assumed to send to the other's QPN with its own Q_Key, and "
        "ud-message-exceeds-mtu is not judged");
  }
  ValidationInput in;
  in.local = &l.ep;
  in.remote = &r.ep;
  in.local_plan = l.plan;
  in.remote_plan = r.plan;
  std::vector<Finding> findings = Validate(in);
  // A side that never attempted RTR has a derived plan: not the program's doing.
  std::erase_if(findings, [&](const Finding& f) {
    const bool derived = (f.direction == Direction::kLocal && !l.plan) ||
                         (f.direction == Direction::kRemote && !r.plan);
    return derived && IsPlanAttribute(f.attribute);
  });
  v.judged = true;
  CollectFailures(pair.a, a, findings, Direction::kLocal, v.failures);
  CollectFailures(pair.b, b, findings, Direction::kRemote, v.failures);
  v.findings = std::move(findings);
  return v;
}

// The rules about q alone: q against a stand-in peer shaped after q's own
// address vector, keeping only findings on q's side.
std::vector<Finding> SoloFindings(const ObservedQp& q) {
  if (!q.endpoint || !q.applied || !AttemptedRtr(q)) return {};
  const EndpointInfo& self = *q.endpoint;
  QpAttrs a = *q.applied;
  const bool ud = self.transport == Transport::kUd;
  if (ud) a.dest_qp_num = 2;
  EndpointInfo ghost = self;
  ghost.identity = {};
  ghost.gid_table.clear();
  ghost.path.sgid.reset();
  if (a.ah.is_global) {
    GidEntry g;
    g.gid = a.ah.dgid;
    if (self.path.sgid) g.type = self.path.sgid->type;
    g.family = FamilyOfGid(g.gid, g.type);
    ghost.path.sgid = g;
  }
  ghost.port.lid = a.ah.dlid;
  ghost.port.lmc = 0;
  ghost.port.active_mtu = Mtu::kInvalid;
  ghost.rd_atomic = {};
  ghost.rd_atomic.max_dest_rd_atomic = 255;
  ghost.keys.qkey = a.remote_qkey.value_or(a.qkey);
  ghost.qps = {{a.dest_qp_num, a.rq_psn, std::nullopt}};
  ConnectionPlan plan;
  plan.transport = self.transport;
  plan.qps = {a};
  ValidationInput in;
  in.local = &self;
  in.remote = &ghost;
  in.local_plan = plan;
  std::vector<Finding> findings = Validate(in);
  std::erase_if(findings, [](const Finding& f) {
    return f.direction != Direction::kLocal || f.unchecked || f.severity == Severity::kInfo;
  });
  return findings;
}

std::string Who(const ObservedQp& q) {
  std::string s = "QP " + QpnText(q.qpn) + " of " + (q.comm.empty() ? "?" : q.comm) + " pid " +
                  std::to_string(q.pid);
  if (!q.origin.empty()) s += " (" + q.origin + ")";
  return s;
}

std::string LoneDetail(const Observation& obs, size_t i, const std::string& status) {
  const ObservedQp& q = obs.qps[i];
  if (status == "dangling") {
    std::vector<std::string> named;
    for (size_t j = 0; j < obs.qps.size(); ++j) {
      if (j != i && obs.qps[j].qpn == *q.dest_qpn) named.push_back(Who(obs.qps[j]));
    }
    std::string s = "its dest_qp_num " + QpnText(*q.dest_qpn);
    if (named.empty()) {
      return s + " names no other QP in the given traces (was the peer traced?" +
             (*q.dest_qpn == q.qpn ? " QPNs repeat across devices and hosts" : "") + ")";
    }
    s += " names ";
    for (size_t k = 0; k < named.size(); ++k) s += (k ? ", " : "") + named[k];
    return s + ", which is connected to another QP or aims elsewhere";
  }
  if (status == "ambiguous") {
    return "several traced QPs are equally likely peers (QPNs repeat across devices and hosts, "
           "and no address, PSN or name tells them apart)";
  }
  if (q.transport == Transport::kUd) {
    return q.address_handles.empty()
               ? "a UD QP that created no address handle, and none in the traces names its port"
               : "a UD QP whose address handles name no traced UD QP's port";
  }
  return "it never set dest_qp_num (state " + (q.state.empty() ? "unknown" : q.state) +
         "): it was never connected";
}

void Count(const std::vector<Finding>& findings, Verdict& v) {
  v.errors += CountSeverity(findings, Severity::kError);
  v.warnings += CountSeverity(findings, Severity::kWarning);
  v.infos += CountSeverity(findings, Severity::kInfo);
}

}  // namespace

std::string QpnText(uint32_t qpn) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%06x", qpn);
  return buf;
}

Verdict JudgeObservation(const Observation& observation) {
  Verdict v;
  const Pairing pairing = PairObservedQps(observation);
  for (const ObservedPair& p : pairing.pairs) {
    PairVerdict pv = JudgePair(observation, p);
    Count(pv.findings, v);
    v.errors += pv.failures.size();
    v.pairs.push_back(std::move(pv));
  }
  const auto lone = [&](const std::vector<size_t>& list, const char* status) {
    for (size_t i : list) {
      LoneVerdict lv;
      lv.qp = i;
      lv.status = status;
      lv.detail = LoneDetail(observation, i, status);
      lv.findings = SoloFindings(observation.qps[i]);
      CollectFailures(i, observation.qps[i], lv.findings, Direction::kLocal, lv.failures);
      Count(lv.findings, v);
      v.errors += lv.failures.size();
      ++v.warnings;
      v.lone.push_back(std::move(lv));
    }
  };
  lone(pairing.dangling, "dangling");
  lone(pairing.ambiguous, "ambiguous");
  lone(pairing.unpaired, "unpaired");
  std::sort(v.lone.begin(), v.lone.end(),
            [](const LoneVerdict& x, const LoneVerdict& y) { return x.qp < y.qp; });
  return v;
}

}  // namespace qpconnect::trace
