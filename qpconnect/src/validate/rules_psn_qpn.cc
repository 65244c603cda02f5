// SPDX-License-Identifier: MIT
// QP list, QPN and PSN rules: qp-list-empty, qp-count-mismatch, qpn-out-of-range,
// qpn-reserved, qpn-duplicate, psn-out-of-range, qpn-mismatch (all transports),
// psn-mismatch (RC, UC).
// Sources: the seed ("rq_psn(X) must equal sq_psn(Y)", "dest_qp_num(X) must equal
// qp_num(Y)", UD: "remote_qpn(X) must equal qp_num(Y)"); IBA vol. 1 ch. 9.2
// (24-bit DestQP and PSN fields of the BTH) and ch. 9.7 (PSN checks).
#include <algorithm>
#include <string>
#include <unordered_set>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

// Published QP list of one side: non-empty, 24-bit, not QP0/QP1, distinct.
void CheckPublishedQps(const SideView& x, FindingSink& sink) {
  const auto& qps = x.ep->qps;
  const std::string who = std::string("the ") + x.name + " ";
  if (qps.empty()) {
    sink.Add(Rule::kQpListEmpty, x,
             {.x_value = "0",
              .message = who + "side publishes no QP",
              .fix = "create the QPs before publishing the endpoint (or check the exchange "
                     "delivered the whole record)"});
    return;
  }
  std::unordered_set<uint32_t> seen;
  seen.reserve(qps.size());
  for (size_t i = 0; i < qps.size(); ++i) {
    const QpEntry& q = qps[i];
    if (q.qpn > kQpnMask) {
      sink.Add(Rule::kQpnOutOfRange, x,
               {.qp = i,
                .x_value = Hex(q.qpn, 8),
                .message = who + "QPN " + Hex(q.qpn, 8) + " does not fit in 24 bits",
                .fix = "publish ibv_qp.qp_num as is; check the record's parser"});
    } else if (q.qpn <= 1) {
      sink.Add(Rule::kQpnReserved, x,
               {.qp = i,
                .x_value = Qpn(q.qpn),
                .message = who + "QPN " + Qpn(q.qpn) + " is a management QP (QP0/QP1)",
                .fix = "publish the QPN of the QP you created (ibv_qp.qp_num); a zero usually "
                       "means the record was not filled"});
    }
    if (!seen.insert(q.qpn).second) {
      sink.Add(Rule::kQpnDuplicate, x,
               {.qp = i,
                .x_value = Qpn(q.qpn),
                .message = who + "side publishes QPN " + Qpn(q.qpn) + " more than once",
                .fix = "publish each QP once, in the order the peer should pair them"});
    }
    if (q.psn > kPsnMask) {
      sink.Add(Rule::kPsnOutOfRange, x,
               {.qp = i,
                .x_value = Hex(q.psn, 8),
                .message = who + "published PSN " + Hex(q.psn, 8) + " does not fit in 24 bits",
                .fix = "mask the starting PSN to 24 bits (lrand48() & 0xffffff)",
                .attribute = "sq_psn"});
    }
  }
}

// Ranges of the PSNs and QPNs a caller-supplied plan programs (a derived plan
// copies the published values, already checked above).
void CheckPlanRanges(const SideView& x, FindingSink& sink) {
  if (x.plan_derived) return;
  const std::string who = std::string("the ") + x.name + " ";
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const QpAttrs& a = qps[i];
    if (a.sq_psn > kPsnMask) {
      sink.Add(Rule::kPsnOutOfRange, x,
               {.qp = i,
                .x_value = Hex(a.sq_psn, 8),
                .message = who + "sq_psn " + Hex(a.sq_psn, 8) + " does not fit in 24 bits",
                .fix = "mask PSNs to 24 bits",
                .attribute = "sq_psn"});
    }
    if (a.rq_psn > kPsnMask) {
      sink.Add(Rule::kPsnOutOfRange, x,
               {.qp = i,
                .x_value = Hex(a.rq_psn, 8),
                .message = who + "rq_psn " + Hex(a.rq_psn, 8) + " does not fit in 24 bits",
                .fix = "mask PSNs to 24 bits",
                .attribute = "rq_psn"});
    }
    if (a.dest_qp_num > kQpnMask) {
      sink.Add(
          Rule::kQpnOutOfRange, x,
          {.qp = i,
           .x_value = Hex(a.dest_qp_num, 8),
           .message = who + "dest_qp_num " + Hex(a.dest_qp_num, 8) + " does not fit in 24 bits",
           .fix = "use the peer's published QPN",
           .attribute = "dest_qp_num"});
    } else if (a.dest_qp_num <= 1) {
      sink.Add(Rule::kQpnReserved, x,
               {.qp = i,
                .x_value = Qpn(a.dest_qp_num),
                .message = who + "dest_qp_num " + Qpn(a.dest_qp_num) +
                           " targets a management QP (QP0/QP1)",
                .fix = "use the peer's published QPN",
                .attribute = "dest_qp_num"});
    }
  }
}

// qpn-mismatch and psn-mismatch for the X->Y direction.
void CheckCross(const Context& ctx, const SideView& x, const SideView& y, FindingSink& sink) {
  const bool check_psn = ctx.Applies(Rule::kPsnMismatch);
  for (size_t i = 0; i < ctx.n; ++i) {
    const QpAttrs& a = x.plan->qps[i];
    const QpEntry& peer = y.ep->qps[i];
    if (a.dest_qp_num != peer.qpn) {
      const bool ud = ctx.transport == Transport::kUd;
      sink.Add(Rule::kQpnMismatch, x,
               {.qp = i,
                .x_value = Qpn(a.dest_qp_num),
                .y_value = Qpn(peer.qpn),
                .message = std::string("the ") + x.name + (ud ? " remote_qpn " : " dest_qp_num ") +
                           Qpn(a.dest_qp_num) + " is not the " + y.name + " QP's number " +
                           Qpn(peer.qpn),
                .fix = std::string("set ") + (ud ? "remote_qpn" : "dest_qp_num") + " to " +
                       Qpn(peer.qpn) +
                       " (the peer's QP at the same position; were the "
                       "records swapped?)",
                .attribute = ud ? "remote_qpn" : "dest_qp_num"});
    }
    if (!check_psn) continue;
    const uint32_t peer_sq_psn = y.plan->qps[i].sq_psn;
    if (a.rq_psn == peer_sq_psn) continue;
    std::string fix = "set rq_psn to " + Psn(peer_sq_psn) + ", the " + y.name + " QP's sq_psn";
    if (peer.psn != peer_sq_psn) {
      fix += " (note: the " + std::string(y.name) + " side published PSN " + Psn(peer.psn) +
             " but programs sq_psn " + Psn(peer_sq_psn) + "; make it program what it publishes)";
    } else {
      fix += " (the PSN it published; were the records swapped?)";
    }
    sink.Add(Rule::kPsnMismatch, x,
             {.qp = i,
              .x_value = Psn(a.rq_psn),
              .y_value = Psn(peer_sq_psn),
              .message = std::string("the ") + x.name + " rq_psn " + Psn(a.rq_psn) +
                         " is not the " + y.name + " sq_psn " + Psn(peer_sq_psn) + ": the " +
                         y.name + " side's packets are dropped as out of sequence",
              .fix = std::move(fix)});
  }
}

}  // namespace

void CheckPsnQpnRules(const Context& ctx, FindingSink& sink) {
  for (const SideView* x : {&ctx.local, &ctx.remote}) {
    CheckPublishedQps(*x, sink);
    CheckPlanRanges(*x, sink);
  }
  const size_t l = ctx.local.ep->qps.size();
  const size_t r = ctx.remote.ep->qps.size();
  if (l != r && l != 0 && r != 0) {
    sink.AddPair(Rule::kQpCountMismatch,
                 {.x_value = Dec(l),
                  .y_value = Dec(r),
                  .message = "the local side publishes " + Dec(l) + " QPs and the remote side " +
                             Dec(r) + ": only " + Dec(std::min(l, r)) + " will be connected",
                  .fix = "create the same number of QPs on both sides (--qps)"});
  }
  ctx.BothDirections([&](const SideView& x, const SideView& y) { CheckCross(ctx, x, y, sink); });
}

}  // namespace qpconnect::validate_internal
