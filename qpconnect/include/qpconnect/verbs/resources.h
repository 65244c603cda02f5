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
// `channel` may be null (polling only).
Result<UniqueCq> CreateCq(ibv_context& ctx, int cqe, ibv_comp_channel* channel);
Result<UniqueQp> CreateQp(ibv_pd& pd, ibv_qp_init_attr init);
Result<UniqueMr> RegMr(ibv_pd& pd, void* addr, size_t length, unsigned access);
Result<UniqueAh> CreateAh(ibv_pd& pd, ibv_ah_attr attr);

}  // namespace qpconnect::verbs
