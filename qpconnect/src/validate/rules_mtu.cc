// SPDX-License-Identifier: MIT
// Path MTU rules: mtu-invalid, mtu-mismatch, mtu-above-active,
// mtu-above-peer-active (RC, UC), ud-message-exceeds-mtu (UD).
// Sources: the seed ("path_mtu(X) must equal path_mtu(Y)" for UC and RC);
// ibv_query_port(3) (active_mtu); ibv_modify_qp(3); ibv_ud_pingpong (message size
// <= active MTU: UD does not segment).
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

// path_mtu(X) against the active MTU of `port_side`'s port.
void CheckAgainstActive(Rule rule, const SideView& x, const SideView& port_side,
                        FindingSink& sink) {
  const Mtu active = port_side.ep->port.active_mtu;
  const bool own = &x == &port_side;
  if (!IsValidMtu(active)) {
    sink.Unchecked(rule, x.dir,
                   std::string("the active MTU of the ") + port_side.name + " port is not stated");
    return;
  }
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const Mtu m = qps[i].path_mtu;
    if (!IsValidMtu(m) || MtuBytes(m) <= MtuBytes(active)) continue;
    sink.Add(rule, x,
             {.qp = i,
              .x_value = own ? MtuText(m) + " (active " + MtuText(active) + ")" : MtuText(m),
              .y_value = own ? std::string() : "active " + MtuText(active),
              .message = std::string("the ") + x.name + " path_mtu " + MtuText(m) +
                         " is above the active MTU " + MtuText(active) + " of the " +
                         port_side.name + " port",
              .fix = "use path_mtu " + MtuText(active) +
                     " or less (qpconnect negotiates min(local, remote) unless --mtu forces it)"});
  }
}

void CheckRcUc(const Context& ctx, FindingSink& sink) {
  bool any_invalid = false;
  for (const SideView* x : {&ctx.local, &ctx.remote}) {
    const auto& qps = x->plan->qps;
    for (size_t i = 0; i < qps.size(); ++i) {
      if (IsValidMtu(qps[i].path_mtu)) continue;
      any_invalid = true;
      sink.Add(Rule::kMtuInvalid, *x,
               {.qp = i,
                .x_value = MtuText(qps[i].path_mtu),
                .message = std::string("the ") + x->name + " path_mtu is not a valid MTU",
                .fix = "use 256, 512, 1024, 2048 or 4096"});
    }
  }
  ctx.BothDirections([&](const SideView& x, const SideView& y) {
    CheckAgainstActive(Rule::kMtuAboveActive, x, x, sink);
    CheckAgainstActive(Rule::kMtuAbovePeerActive, x, y, sink);
  });
  for (size_t i = 0; i < ctx.n; ++i) {
    const Mtu l = ctx.local.plan->qps[i].path_mtu;
    const Mtu r = ctx.remote.plan->qps[i].path_mtu;
    if (l == r || (any_invalid && (!IsValidMtu(l) || !IsValidMtu(r)))) continue;
    sink.AddPair(Rule::kMtuMismatch,
                 {.qp = i,
                  .x_value = MtuText(l),
                  .y_value = MtuText(r),
                  .message = "the local path_mtu is " + MtuText(l) +
                             " but the remote path_mtu is " + MtuText(r),
                  .fix = "program the same path_mtu on both sides: the smaller of the two active "
                         "MTUs (pass the same --mtu, or let qpconnect negotiate)"});
  }
}

// UD: a message is one packet and must fit the path (the smaller active MTU).
void CheckUdMessage(const Context& ctx, FindingSink& sink) {
  ctx.BothDirections([&](const SideView& x, const SideView& y) {
    if (x.plan_derived) {
      sink.Unchecked(Rule::kUdMessageExceedsMtu, x.dir,
                     std::string("the ") + x.name + " message size is not known (no plan given)");
      return;
    }
    Mtu limit = Mtu::kInvalid;
    for (Mtu m : {x.ep->port.active_mtu, y.ep->port.active_mtu}) {
      if (IsValidMtu(m) && (limit == Mtu::kInvalid || MtuBytes(m) < MtuBytes(limit))) limit = m;
    }
    if (limit == Mtu::kInvalid) {
      sink.Unchecked(Rule::kUdMessageExceedsMtu, x.dir, "neither port states its active MTU");
      return;
    }
    const uint32_t size = x.plan->message_size;
    if (size <= static_cast<uint32_t>(MtuBytes(limit))) return;
    sink.Add(Rule::kUdMessageExceedsMtu, x,
             {.x_value = Dec(size),
              .y_value = "path MTU " + MtuText(limit),
              .message = std::string("the ") + x.name + " side sends " + Dec(size) +
                         "-byte datagrams over a path MTU of " + MtuText(limit),
              .fix = "send at most " + MtuText(limit) +
                     " bytes per UD message (split larger messages; the receive buffer also "
                     "needs 40 bytes for the GRH)"});
  });
}

}  // namespace

void CheckMtuRules(const Context& ctx, FindingSink& sink) {
  if (ctx.transport == Transport::kUd) {
    CheckUdMessage(ctx, sink);
  } else {
    CheckRcUc(ctx, sink);
  }
}

}  // namespace qpconnect::validate_internal
