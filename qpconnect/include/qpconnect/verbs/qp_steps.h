// SPDX-License-Identifier: MIT
// The one transition path: every per-QP state step (RESET->INIT, INIT->RTR,
// RTR->RTS, any->RESET) and the walks over a set of QPs, over QpControls
// (verbs/qp_control.h). The owning Session (Open, Connect, Recycle), the
// adopting Connector and, through them, the mesh all move their QPs here, so
// each applies the same masks (verbs/qp_attrs.h), checks the request the same
// way and explains a refusal the same way (verbs/transition.h); unit tests
// drive the same code over tests/fakes/fake_qp.h.
//
// The order, for every caller: every QP INIT->RTR, then every QP RTR->RTS
// (ConnectQps). Why this one rather than each QP INIT->RTR->RTS in turn:
//   - a refusal at RTR (a bad address vector, MTU or GID: what the validator
//     cannot always see) is found on any QP before any of this side's QPs can
//     send, so a failed connect never leaves some QPs sending to a peer whose
//     other QPs were never set up;
//   - the receive side of every QP is ready before the first one can send,
//     which is what the peer's barrier assumes;
//   - RTR and RTS are timed as two steps over all QPs (SessionTimings,
//     PhaseTimings: rtr, rts), as qp-connect's progress lines and the bench
//     figures report them.
// Either order makes the same modify calls per QP; only the interleaving
// differs (docs/design.md, "The transition path").
//
// Thread-safety: as the QpControls (one thread at a time per QP).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"
#include "qpconnect/result.h"
#include "qpconnect/verbs/qp_control.h"
#include "qpconnect/verbs/resources.h"

namespace qpconnect::verbs {

// Progress of a per-QP step ("create", "init", "rtr", "rts", "traffic"):
// called after each QP with how many are done and the total. Cheap to call;
// the receiver throttles its output itself.
using ProgressFn = std::function<void(std::string_view step, size_t done, size_t total)>;

// The spread of one per-QP verbs step over the QPs it ran on.
struct QpStepTimes {
  std::chrono::nanoseconds total{0};  // sum over the QPs
  std::chrono::nanoseconds p50{0};    // per QP, nearest rank
  std::chrono::nanoseconds p99{0};
  size_t qps = 0;  // how many QPs went through the step
};

// total, p50 and p99 of `samples` (which it reorders); zeros when empty.
QpStepTimes SummarizeQpStep(std::vector<std::chrono::nanoseconds>& samples);

// The Q_Key a UD QP puts in its send WRs under `plan`: the plan's remote_qkey
// when it overrides, else the QP's own Q_Key (plan.qps[0].qkey) — so that a
// Q_Key mismatch shows as dropped datagrams, as the qkey-mismatch rule
// predicts. `fallback` when the plan is empty.
uint32_t UdSendQkey(const ConnectionPlan& plan, uint32_t fallback);

// The access flags a connector QP gets at INIT: RC local + remote write +
// remote read; UC local + remote write; UD local write.
unsigned DefaultAccessFlags(Transport transport);

// ---- One QP, one step ----

// RESET->INIT with `attrs.port_num`, `attrs.pkey_index` and access flags (RC,
// UC) or `attrs.qkey` (UD). kVerbs naming transition, mask and values.
Result<void> MoveToInit(QpControl& qp, Transport transport, const QpAttrs& attrs,
                        unsigned access_flags);

// INIT->RTR->RTS with the plan entry `attrs`; `hint` is appended to a refusal
// (e.g. "the validator reported errors above"). kInvalidArgument, before
// anything reaches the device, for an address vector ibv_ah_attr cannot carry
// (CheckAddressVector); kVerbs for a refusal.
Result<void> MoveToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint = {});

// The two halves of MoveToRts(), for callers that time them apart: INIT->RTR
// (with the address vector check), then RTR->RTS. Same errors.
Result<void> MoveToRtr(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint = {});
Result<void> MoveRtrToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                          const std::string& hint = {});

// Any state -> RESET (the recycle step: the QP forgets its peer, its queues
// are flushed). kVerbs with operation "ibv_modify_qp ->RESET (<transport> qp
// 0x...)" and `hint` appended to the detail.
Result<void> MoveToReset(QpControl& qp, Transport transport, const std::string& hint = {});

// ---- Every QP of a set ----

// RESET->INIT for each QP in turn with `attrs`/`access_flags` (MoveToInit),
// then `after_init(i)` (the session posts its receives; may be empty), timed
// together per QP into `times` on every path; `progress` ("init") after each.
// Stops at the first error (kVerbs, or after_init's), naming nothing more.
Result<void> InitQps(std::span<QpControl* const> qps, Transport transport, const QpAttrs& attrs,
                     unsigned access_flags, const std::function<Result<void>(size_t)>& after_init,
                     const ProgressFn& progress, QpStepTimes& times);

// What ConnectQps() calls besides the transitions; each may be empty.
struct ConnectHooks {
  // After QP i reached RTR, inside its timed RTR step (UD: its address
  // handle). An error stops the walk and is returned as is.
  std::function<Result<void>(size_t i)> after_rtr;
  // "rtr" after each QP's RTR, "rts" after each QP's RTS.
  ProgressFn progress;
};

// The per-QP RTR and RTS steps, summarized on every path.
struct ConnectTimes {
  QpStepTimes rtr;
  QpStepTimes rts;
};

// QP i to the plan's entry i, in the one order: every QP INIT->RTR (MoveToRtr
// with `hint`, then hooks.after_rtr(i)), then every QP RTR->RTS
// (MoveRtrToRts). Stops at the first error: MoveToRtr's or MoveRtrToRts's
// (naming the transition and the QP), or the hook's. `times` holds what was
// done on every path. REQUIRES: plan.qps.size() == qps.size().
Result<void> ConnectQps(std::span<QpControl* const> qps, Transport transport,
                        const ConnectionPlan& plan, const std::string& hint,
                        const ConnectHooks& hooks, ConnectTimes& times);

// What a connected set of QPs keeps of its peer: QP i's remote QPN, and (UD)
// its address handle.
struct PeerHandles {
  std::vector<uint32_t> remote_qpns;
  std::vector<UniqueAh> ahs;
};

// ConnectQps() with `plan`, after which QP i's remote QPN is recorded in
// `peer` and, on UD, the peer's address handle made in `pd_of(i)` through
// `env` (a refusal with `hint` appended). `peer` is cleared first; `times`
// holds what was done on every path. Errors as ConnectQps() and CreateAh.
// The composer (qpconnect/composer.h) is its caller.
Result<void> ConnectToPlan(std::span<QpControl* const> qps, Transport transport,
                           const ConnectionPlan& plan, const std::string& hint, QpEnv& env,
                           const std::function<ibv_pd&(size_t)>& pd_of, const ProgressFn& progress,
                           PeerHandles& peer, ConnectTimes& times);

// Every QP to RESET (MoveToReset, the detail naming "QP i (recycle)"), in
// order; stops at the first refusal (kVerbs).
Result<void> ResetQps(std::span<QpControl* const> qps, Transport transport);

}  // namespace qpconnect::verbs
