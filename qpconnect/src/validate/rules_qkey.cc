// SPDX-License-Identifier: MIT
// Q_Key rules (UD): qkey-mismatch, qkey-controlled.
// Source: the seed ("qkey(X) should equal qkey(Y) unless a different Q_Key is
// used in send_wr.wr.ud.remote_qkey(X)"); IBA vol. 1 ch. 10.2 (Q_Keys: a Q_Key
// with the high-order bit set is controlled; in a send WR it selects the QP's own
// Q_Key); ibv_post_send(3).
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

constexpr uint32_t kControlledQkey = 0x80000000u;

std::string QkeyText(uint32_t qkey) { return Hex(qkey, 8); }

}  // namespace

void CheckQkeyRules(const Context& ctx, FindingSink& sink) {
  if (ctx.transport != Transport::kUd) return;
  ctx.BothDirections([&](const SideView& x, const SideView& y) {
    for (size_t i = 0; i < x.plan->qps.size(); ++i) {
      const QpAttrs& a = x.plan->qps[i];
      if ((a.qkey & kControlledQkey) != 0) {
        sink.Add(Rule::kQkeyControlled, x,
                 {.qp = i,
                  .x_value = QkeyText(a.qkey),
                  .message = std::string("the ") + x.name + " QP's Q_Key " + QkeyText(a.qkey) +
                             " is a controlled Q_Key (bit 31 set)",
                  .fix = "use a Q_Key below 0x80000000 (the pingpongs use 0x11111111) unless "
                         "the process is privileged on purpose"});
      }
    }
    for (size_t i = 0; i < ctx.n; ++i) {
      const QpAttrs& a = x.plan->qps[i];
      const uint32_t peer_qkey = y.plan->qps[i].qkey;
      // A remote_qkey with bit 31 set makes the HCA send the QP's own Q_Key.
      const bool overrides = a.remote_qkey && (*a.remote_qkey & kControlledQkey) == 0;
      const uint32_t sent = overrides ? *a.remote_qkey : a.qkey;
      if (sent == peer_qkey) continue;
      const std::string what = overrides ? "remote_qkey" : "qkey";
      sink.Add(Rule::kQkeyMismatch, x,
               {.qp = i,
                .x_value = QkeyText(sent),
                .y_value = QkeyText(peer_qkey),
                .message = std::string("the ") + x.name + " side sends Q_Key " + QkeyText(sent) +
                           " (its " + what + ") but the " + y.name + " QP's Q_Key is " +
                           QkeyText(peer_qkey) + ": the datagrams are dropped",
                .fix = "set the same qkey on both QPs at INIT, or set the send WRs' remote_qkey "
                       "to " +
                       QkeyText(peer_qkey),
                .attribute = overrides ? "remote_qkey" : "qkey"});
    }
  });
}

}  // namespace qpconnect::validate_internal
