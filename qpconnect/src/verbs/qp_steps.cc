// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/qp_steps.h"

#include <infiniband/verbs.h>

#include "qpconnect/traffic_stats.h"
#include "qpconnect/verbs/qp_attrs.h"
#include "qpconnect/verbs/transition.h"

namespace qpconnect::verbs {
namespace {

using StepClock = std::chrono::steady_clock;

// Per-QP samples of one step, summarized when the step ends (every path).
class StepSamples {
 public:
  StepSamples(QpStepTimes& out, size_t n) : out_(out) { samples_.reserve(n); }
  ~StepSamples() { out_ = SummarizeQpStep(samples_); }
  StepSamples(const StepSamples&) = delete;
  StepSamples& operator=(const StepSamples&) = delete;
  void Add(StepClock::time_point start) { samples_.push_back(StepClock::now() - start); }

 private:
  QpStepTimes& out_;
  std::vector<std::chrono::nanoseconds> samples_;
};

}  // namespace

QpStepTimes SummarizeQpStep(std::vector<std::chrono::nanoseconds>& samples) {
  QpStepTimes t;
  if (samples.empty()) return t;
  t.qps = samples.size();
  for (auto d : samples) t.total += d;
  t.p50 = NearestRank(samples, 50);
  t.p99 = NearestRank(samples, 99);
  return t;
}

uint32_t UdSendQkey(const ConnectionPlan& plan, uint32_t fallback) {
  if (plan.qps.empty()) return fallback;
  return plan.qps[0].remote_qkey.value_or(plan.qps[0].qkey);
}

unsigned DefaultAccessFlags(Transport transport) {
  switch (transport) {
    case Transport::kRc:
      return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    case Transport::kUc:
      return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    case Transport::kUd:
      return IBV_ACCESS_LOCAL_WRITE;
  }
  return IBV_ACCESS_LOCAL_WRITE;
}

Result<void> MoveToInit(QpControl& qp, Transport transport, const QpAttrs& attrs,
                        unsigned access_flags) {
  return ApplyTransition(qp, transport, BuildInit(transport, attrs, access_flags));
}

Result<void> MoveToRtr(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint) {
  QPC_TRY(CheckAddressVector(attrs.ah));
  return ApplyTransition(qp, transport, BuildRtr(transport, attrs), hint);
}

Result<void> MoveRtrToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                          const std::string& hint) {
  return ApplyTransition(qp, transport, BuildRts(transport, attrs), hint);
}

Result<void> MoveToRts(QpControl& qp, Transport transport, const QpAttrs& attrs,
                       const std::string& hint) {
  QPC_TRY(MoveToRtr(qp, transport, attrs, hint));
  return MoveRtrToRts(qp, transport, attrs, hint);
}

Result<void> MoveToReset(QpControl& qp, Transport transport, const std::string& hint) {
  return ApplyTransition(qp, transport, BuildReset(transport), hint);
}

Result<void> InitQps(std::span<QpControl* const> qps, Transport transport, const QpAttrs& attrs,
                     unsigned access_flags, const std::function<Result<void>(size_t)>& after_init,
                     const ProgressFn& progress, QpStepTimes& times) {
  StepSamples samples(times, qps.size());
  for (size_t i = 0; i < qps.size(); ++i) {
    const auto start = StepClock::now();
    QPC_TRY(MoveToInit(*qps[i], transport, attrs, access_flags));
    if (after_init) QPC_TRY(after_init(i));
    samples.Add(start);
    if (progress) progress("init", i + 1, qps.size());
  }
  return Ok();
}

Result<void> ConnectQps(std::span<QpControl* const> qps, Transport transport,
                        const ConnectionPlan& plan, const std::string& hint,
                        const ConnectHooks& hooks, ConnectTimes& times) {
  {
    StepSamples samples(times.rtr, qps.size());
    for (size_t i = 0; i < qps.size(); ++i) {
      const auto start = StepClock::now();
      QPC_TRY(MoveToRtr(*qps[i], transport, plan.qps[i], hint));
      if (hooks.after_rtr) QPC_TRY(hooks.after_rtr(i));
      samples.Add(start);
      if (hooks.progress) hooks.progress("rtr", i + 1, qps.size());
    }
  }
  StepSamples samples(times.rts, qps.size());
  for (size_t i = 0; i < qps.size(); ++i) {
    const auto start = StepClock::now();
    QPC_TRY(MoveRtrToRts(*qps[i], transport, plan.qps[i], hint));
    samples.Add(start);
    if (hooks.progress) hooks.progress("rts", i + 1, qps.size());
  }
  return Ok();
}

Result<void> ConnectToPlan(std::span<QpControl* const> qps, Transport transport,
                           const ConnectionPlan& plan, const std::string& hint, QpEnv& env,
                           const std::function<ibv_pd&(size_t)>& pd_of, const ProgressFn& progress,
                           PeerHandles& peer, ConnectTimes& times) {
  peer.remote_qpns.clear();
  peer.ahs.clear();
  peer.remote_qpns.reserve(qps.size());
  ConnectHooks hooks;
  hooks.progress = progress;
  hooks.after_rtr = [&](size_t i) -> Result<void> {
    peer.remote_qpns.push_back(plan.qps[i].dest_qp_num);
    if (transport != Transport::kUd) return Ok();
    auto ah = env.CreateAh(pd_of(i), ToAhAttr(plan.qps[i].ah));
    if (!ah) {
      Error e = std::move(ah).error();
      if (!hint.empty()) e.detail += "; " + hint;
      return e;
    }
    peer.ahs.push_back(std::move(*ah));
    return Ok();
  };
  return ConnectQps(qps, transport, plan, hint, hooks, times);
}

Result<void> ResetQps(std::span<QpControl* const> qps, Transport transport) {
  for (size_t i = 0; i < qps.size(); ++i) {
    QPC_TRY(MoveToReset(*qps[i], transport, "QP " + std::to_string(i) + " (recycle)"));
  }
  return Ok();
}

}  // namespace qpconnect::verbs
