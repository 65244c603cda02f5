// SPDX-License-Identifier: MIT
// RAII owners for every ibv_* object the connector uses, and their creators.
//
// Each owner is a std::unique_ptr with a named noexcept deleter that logs a
// failed destroy (destructors cannot report errors). Parents must outlive
// children: aggregates declare members in creation order so C++ destroys them
// in reverse (context, PD, channel, CQ, QP, MR, AH).
//
// Thread-safety: owners are move-only values; libibverbs objects follow
// libibverbs' rules.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <memory>

#include "qpconnect/result.h"

namespace qpconnect::verbs {

struct PdDeleter {
  void operator()(ibv_pd* pd) const noexcept;
};
struct CompChannelDeleter {
  void operator()(ibv_comp_channel* ch) const noexcept;
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const noexcept;
};
struct QpDeleter {
  void operator()(ibv_qp* qp) const noexcept;
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const noexcept;
};
struct AhDeleter {
  void operator()(ibv_ah* ah) const noexcept;
};

using UniquePd = std::unique_ptr<ibv_pd, PdDeleter>;
using UniqueCompChannel = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;
using UniqueCq = std::unique_ptr<ibv_cq, CqDeleter>;
using UniqueQp = std::unique_ptr<ibv_qp, QpDeleter>;
using UniqueMr = std::unique_ptr<ibv_mr, MrDeleter>;
using UniqueAh = std::unique_ptr<ibv_ah, AhDeleter>;

// Each returns kVerbs with errno and the operation on failure.
Result<UniquePd> AllocPd(ibv_context& ctx);
Result<UniqueCompChannel> CreateCompChannel(ibv_context& ctx);
// `channel` may be null (polling only); `cq_context` is what completion
// events hand back (ibv_get_cq_event), null by default.
Result<UniqueCq> CreateCq(ibv_context& ctx, int cqe, ibv_comp_channel* channel,
                          void* cq_context = nullptr);
// ibv_create_qp with `init`; the QP's capabilities as created are written
// back into `init.cap` (as ibv_create_qp does), which librdmacm's callers
// read.
Result<UniqueQp> CreateQp(ibv_pd& pd, ibv_qp_init_attr& init);
// ibv_create_qp_ex with `init` (its PD in init.pd, IBV_QP_INIT_ATTR_PD set).
// The QP's capabilities as created are written back into `init.cap`.
Result<UniqueQp> CreateQpEx(ibv_context& ctx, ibv_qp_init_attr_ex& init);
Result<UniqueMr> RegMr(ibv_pd& pd, void* addr, size_t length, unsigned access);
Result<UniqueAh> CreateAh(ibv_pd& pd, ibv_ah_attr attr);

}  // namespace qpconnect::verbs
