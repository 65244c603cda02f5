// SPDX-License-Identifier: MIT
// Rules of the pair's shape and of each side against its own port and device:
// transport-mismatch, link-layer-mismatch, port-not-active, lid-zero,
// plan-endpoint-mismatch, and the RC timer/retry ranges and warnings
// (retry-cnt-out-of-range, rnr-retry-out-of-range, timeout-out-of-range,
// min-rnr-timer-out-of-range, rnr-retry-zero, timeout-infinite, min-rnr-timer-zero).
// Sources: ibv_modify_qp(3), ibv_query_port(3), IBA vol. 1 ch. 9.7 and 11.
#include <algorithm>
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

// transport-mismatch: the rules are per transport; a pair of different service
// types never exchanges traffic.
void CheckTransport(const Context& ctx, FindingSink& sink) {
  const Transport l = ctx.local.ep->transport;
  const Transport r = ctx.remote.ep->transport;
  if (l == r) return;
  sink.AddPair(Rule::kTransportMismatch,
               {.x_value = TransportName(l),
                .y_value = TransportName(r),
                .message = std::string("the local QPs are ") + TransportName(l) +
                           " but the remote QPs are " + TransportName(r),
                .fix = "create the QPs of both sides with the same ibv_qp_type (run both sides "
                       "with the same --transport)"});
}

// link-layer-mismatch: an InfiniBand port and an Ethernet port share no path.
void CheckLinkLayer(const Context& ctx, FindingSink& sink) {
  const LinkLayer l = ctx.local.ep->port.link_layer;
  const LinkLayer r = ctx.remote.ep->port.link_layer;
  if (l == LinkLayer::kUnspecified || r == LinkLayer::kUnspecified) {
    const Direction d = l == r                         ? Direction::kBoth
                        : l == LinkLayer::kUnspecified ? Direction::kLocal
                                                       : Direction::kRemote;
    sink.Unchecked(Rule::kLinkLayerMismatch, d, "the link layer of a port is not stated");
    return;
  }
  if (l == r) return;
  sink.AddPair(Rule::kLinkLayerMismatch,
               {.x_value = LinkLayerName(l),
                .y_value = LinkLayerName(r),
                .message = std::string("the local port is ") + LinkLayerName(l) +
                           " but the remote port is " + LinkLayerName(r),
                .fix = "use ports of the same fabric on both sides (ibv_devinfo shows "
                       "link_layer)"});
}

// port-not-active and lid-zero: facts of a side's own port.
void CheckPort(const SideView& x, FindingSink& sink) {
  const PortFacts& p = x.ep->port;
  // A port whose link layer is unspecified was never queried (e.g. a pingpong
  // peer): its state is unknown, not DOWN.
  if (!x.LinkKnown()) {
    sink.Unchecked(Rule::kPortNotActive, x.dir,
                   std::string("the ") + x.name + " port's state is not stated");
  } else if (!p.active) {
    sink.Add(
        Rule::kPortNotActive, x,
        {.x_value = "not active",
         .message = std::string("the ") + x.name + " port " + Dec(p.port_num) + " is not ACTIVE",
         .fix = "bring the link up (cable, switch port, SM on InfiniBand; `ibv_devinfo` "
                "must show PORT_ACTIVE) or use another port"});
  }
  if (x.IsInfiniBand() && p.lid == 0) {
    sink.Add(Rule::kLidZero, x,
             {.x_value = Lid(0),
              .message = std::string("the ") + x.name + " InfiniBand port " + Dec(p.port_num) +
                         " has LID 0: no subnet manager has configured it",
              .fix = "start a subnet manager (opensm) on the fabric, or use a RoCE port"});
  }
}

// plan-endpoint-mismatch: the attributes a side applies must be for the QPs and
// port it published.
void CheckPlanMatchesEndpoint(const SideView& x, FindingSink& sink) {
  const EndpointInfo& ep = *x.ep;
  const ConnectionPlan& plan = *x.plan;
  const std::string who = std::string("the ") + x.name + " plan";
  if (plan.transport != ep.transport) {
    sink.Add(Rule::kPlanEndpointMismatch, x,
             {.x_value = TransportName(plan.transport),
              .message = who + " is for " + TransportName(plan.transport) +
                         " QPs but the endpoint publishes " + TransportName(ep.transport),
              .fix = "build the plan from the endpoint the side published",
              .attribute = "qp_type"});
  }
  // A derived plan has min(N, M) entries by contract; qp-count-mismatch covers that.
  if (!x.plan_derived && plan.qps.size() != ep.qps.size()) {
    sink.Add(Rule::kPlanEndpointMismatch, x,
             {.x_value = Dec(plan.qps.size()),
              .message = who + " has " + Dec(plan.qps.size()) + " QP entries but the endpoint " +
                         "publishes " + Dec(ep.qps.size()) + " QPs",
              .fix = "give one plan entry per published QP, in the same order",
              .attribute = "qps"});
  }
  const size_t n = std::min(plan.qps.size(), ep.qps.size());
  for (size_t i = 0; i < n; ++i) {
    const QpAttrs& a = plan.qps[i];
    if (a.qp_num != ep.qps[i].qpn) {
      sink.Add(Rule::kPlanEndpointMismatch, x,
               {.qp = i,
                .x_value = Qpn(a.qp_num),
                .message = who + " configures QP " + Qpn(a.qp_num) + " where the endpoint " +
                           "publishes QP " + Qpn(ep.qps[i].qpn),
                .fix = "keep plan entries in the order of the published QPs"});
    }
    if (a.port_num != ep.port.port_num) {
      sink.Add(Rule::kPlanEndpointMismatch, x,
               {.qp = i,
                .x_value = Dec(a.port_num),
                .message = who + " uses port " + Dec(a.port_num) + " but the endpoint " +
                           "describes port " + Dec(ep.port.port_num),
                .fix = "publish the facts of the port the QPs are bound to",
                .attribute = "port_num"});
    }
  }
}

// RC timers and retry counts: ranges are errors (EINVAL), dangerous values warnings.
void CheckRcTimers(const SideView& x, FindingSink& sink) {
  const std::string who = std::string("the ") + x.name + " ";
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const QpAttrs& a = qps[i];
    if (a.retry_cnt > 7) {
      sink.Add(Rule::kRetryCntOutOfRange, x,
               {.qp = i,
                .x_value = Dec(a.retry_cnt),
                .message = who + "retry_cnt " + Dec(a.retry_cnt) + " is above 7",
                .fix = "use a retry_cnt of 0..7 (7 is the usual choice)"});
    }
    if (a.rnr_retry > 7) {
      sink.Add(Rule::kRnrRetryOutOfRange, x,
               {.qp = i,
                .x_value = Dec(a.rnr_retry),
                .message = who + "rnr_retry " + Dec(a.rnr_retry) + " is above 7",
                .fix = "use an rnr_retry of 0..7 (7 retries forever)"});
    } else if (a.rnr_retry == 0) {
      sink.Add(Rule::kRnrRetryZero, x,
               {.qp = i,
                .x_value = "0",
                .message = who + "rnr_retry is 0: the first RNR NAK fails the QP",
                .fix = "use rnr_retry 7, and post receives before the peer reaches RTS"});
    }
    if (a.timeout > 31) {
      sink.Add(Rule::kTimeoutOutOfRange, x,
               {.qp = i,
                .x_value = Dec(a.timeout),
                .message = who + "timeout " + Dec(a.timeout) + " is above 31",
                .fix = "use a timeout exponent of 1..31 (14 = 67 ms is common)"});
    } else if (a.timeout == 0) {
      sink.Add(Rule::kTimeoutInfinite, x,
               {.qp = i,
                .x_value = "0",
                .message = who + "timeout is 0: lost packets are never retransmitted",
                .fix = "use a finite timeout such as 14 (67 ms) or 20 (4.3 s)"});
    }
    if (a.min_rnr_timer > 31) {
      sink.Add(Rule::kMinRnrTimerOutOfRange, x,
               {.qp = i,
                .x_value = Dec(a.min_rnr_timer),
                .message = who + "min_rnr_timer " + Dec(a.min_rnr_timer) + " is above 31",
                .fix = "use a min_rnr_timer code of 1..31 (12 = 0.64 ms is common)"});
    } else if (a.min_rnr_timer == 0) {
      sink.Add(Rule::kMinRnrTimerZero, x,
               {.qp = i,
                .x_value = "0",
                .message = who + "min_rnr_timer is 0, which means 655.36 ms per RNR NAK",
                .fix = "use min_rnr_timer 12 (0.64 ms) unless a long back-off is intended"});
    }
  }
}

}  // namespace

void CheckLocalRules(const Context& ctx, FindingSink& sink) {
  CheckTransport(ctx, sink);
  CheckLinkLayer(ctx, sink);
  for (const SideView* x : {&ctx.local, &ctx.remote}) {
    CheckPort(*x, sink);
    CheckPlanMatchesEndpoint(*x, sink);
    if (ctx.transport == Transport::kRc) CheckRcTimers(*x, sink);
  }
}

}  // namespace qpconnect::validate_internal
