// SPDX-License-Identifier: MIT
// RDMA read/atomic depth rules (RC): rd-atomic-exceeds-peer,
// rd-atomic-exceeds-device, dest-rd-atomic-exceeds-device.
// Sources: the seed ("max_rd_atomic(X) must be <= max_dest_rd_atomic(Y)" for RC);
// ibv_query_device(3) (max_qp_init_rd_atom, max_qp_rd_atom); ibv_modify_qp(3).
#include <string>

#include "rules.h"

namespace qpconnect::validate_internal {
namespace {

// One of X's depths against one of X's device limits (0 = limit unknown).
void CheckDeviceLimit(Rule rule, const SideView& x, uint32_t limit, const char* limit_name,
                      uint8_t QpAttrs::*field, FindingSink& sink) {
  const std::string attribute(Meta(rule).attribute);
  if (limit == 0) {
    sink.Unchecked(rule, x.dir,
                   std::string("the ") + x.name + " device's " + limit_name + " is not stated");
    return;
  }
  const auto& qps = x.plan->qps;
  for (size_t i = 0; i < qps.size(); ++i) {
    const uint8_t v = qps[i].*field;
    if (v <= limit) continue;
    sink.Add(rule, x,
             {.qp = i,
              .x_value = Dec(v) + " (" + limit_name + " " + Dec(limit) + ")",
              .message = std::string("the ") + x.name + " " + attribute + " " + Dec(v) +
                         " is above the device's " + limit_name + " " + Dec(limit),
              .fix = "use " + attribute + " <= " + Dec(limit) +
                     " (clamp values taken from the peer to the local device limit)"});
  }
}

}  // namespace

void CheckRdAtomicRules(const Context& ctx, FindingSink& sink) {
  if (ctx.transport != Transport::kRc) return;
  ctx.BothDirections([&](const SideView& x, const SideView& y) {
    const RdAtomic& dev = x.ep->rd_atomic;
    CheckDeviceLimit(Rule::kRdAtomicExceedsDevice, x, dev.device_max_qp_init_rd_atom,
                     "max_qp_init_rd_atom", &QpAttrs::max_rd_atomic, sink);
    CheckDeviceLimit(Rule::kDestRdAtomicExceedsDevice, x, dev.device_max_qp_rd_atom,
                     "max_qp_rd_atom", &QpAttrs::max_dest_rd_atomic, sink);
    for (size_t i = 0; i < ctx.n; ++i) {
      const uint8_t mine = x.plan->qps[i].max_rd_atomic;
      const uint8_t theirs = y.plan->qps[i].max_dest_rd_atomic;
      if (mine <= theirs) continue;
      sink.Add(Rule::kRdAtomicExceedsPeer, x,
               {.qp = i,
                .x_value = "max_rd_atomic " + Dec(mine),
                .y_value = "max_dest_rd_atomic " + Dec(theirs),
                .message = std::string("the ") + x.name + " side may have " + Dec(mine) +
                           " RDMA reads/atomics outstanding but the " + y.name +
                           " side accepts only " + Dec(theirs),
                .fix = std::string("lower the ") + x.name + " max_rd_atomic to " + Dec(theirs) +
                       " or raise the " + y.name + " max_dest_rd_atomic"});
    }
  });
}

}  // namespace qpconnect::validate_internal
