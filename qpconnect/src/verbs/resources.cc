// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/resources.h"

#include <cerrno>
#include <string>

#include "qpconnect/peer_registry.h"
#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::verbs {

void PdDeleter::operator()(ibv_pd* pd) const noexcept {
  if (int rc = ibv_dealloc_pd(pd); rc != 0) LogDestroyFailure("ibv_dealloc_pd", rc);
}
void CompChannelDeleter::operator()(ibv_comp_channel* ch) const noexcept {
  if (int rc = ibv_destroy_comp_channel(ch); rc != 0) {
    LogDestroyFailure("ibv_destroy_comp_channel", rc);
  }
}
void CqDeleter::operator()(ibv_cq* cq) const noexcept {
  if (int rc = ibv_destroy_cq(cq); rc != 0) LogDestroyFailure("ibv_destroy_cq", rc);
}
void QpDeleter::operator()(ibv_qp* qp) const noexcept {
  // Its published peer goes with it (peer_registry.h); nothing to do in a
  // process that published none.
  if (PeerRegistry::ProcessStarted()) {
    try {
      PeerRegistry::Process().Withdraw(ibv_get_device_name(qp->context->device), qp->qp_num);
    } catch (...) {  // a name that cannot be copied: the entry stays until exit
    }
  }
  if (int rc = ibv_destroy_qp(qp); rc != 0) LogDestroyFailure("ibv_destroy_qp", rc);
}
void MrDeleter::operator()(ibv_mr* mr) const noexcept {
  if (int rc = ibv_dereg_mr(mr); rc != 0) LogDestroyFailure("ibv_dereg_mr", rc);
}
void AhDeleter::operator()(ibv_ah* ah) const noexcept {
  if (int rc = ibv_destroy_ah(ah); rc != 0) LogDestroyFailure("ibv_destroy_ah", rc);
}

Result<UniquePd> AllocPd(ibv_context& ctx) {
  errno = 0;
  ibv_pd* pd = ibv_alloc_pd(&ctx);
  if (pd == nullptr) return VerbsError("ibv_alloc_pd");
  return UniquePd(pd);
}

Result<UniqueCompChannel> CreateCompChannel(ibv_context& ctx) {
  errno = 0;
  ibv_comp_channel* ch = ibv_create_comp_channel(&ctx);
  if (ch == nullptr) return VerbsError("ibv_create_comp_channel");
  return UniqueCompChannel(ch);
}

Result<UniqueCq> CreateCq(ibv_context& ctx, int cqe, ibv_comp_channel* channel, void* cq_context) {
  errno = 0;
  ibv_cq* cq = ibv_create_cq(&ctx, cqe, cq_context, channel, 0);
  if (cq == nullptr) {
    const int err = errno;  // before anything below can change it
    return VerbsError("ibv_create_cq", err, "cqe " + std::to_string(cqe));
  }
  return UniqueCq(cq);
}

namespace {
// A refused QP's capabilities, for its error.
std::string CapsText(const ibv_qp_cap& cap) {
  return "max_send_wr " + std::to_string(cap.max_send_wr) + ", max_recv_wr " +
         std::to_string(cap.max_recv_wr) + ", max_send_sge " + std::to_string(cap.max_send_sge);
}
}  // namespace

Result<UniqueQp> CreateQp(ibv_pd& pd, ibv_qp_init_attr& init) {
  errno = 0;
  ibv_qp* qp = ibv_create_qp(&pd, &init);
  if (qp == nullptr) {
    const int err = errno;  // before the detail string is built
    return VerbsError("ibv_create_qp", err, CapsText(init.cap));
  }
  return UniqueQp(qp);
}

Result<UniqueQp> CreateQpEx(ibv_context& ctx, ibv_qp_init_attr_ex& init) {
  errno = 0;
  ibv_qp* qp = ibv_create_qp_ex(&ctx, &init);
  if (qp == nullptr) {
    const int err = errno;  // before the detail string is built
    return VerbsError("ibv_create_qp_ex", err, CapsText(init.cap));
  }
  return UniqueQp(qp);
}

Result<UniqueMr> RegMr(ibv_pd& pd, void* addr, size_t length, unsigned access) {
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(&pd, addr, length, access);
  if (mr == nullptr) {
    const int err = errno;  // before the detail string is built
    return VerbsError("ibv_reg_mr", err,
                      std::to_string(length) +
                          " bytes (ENOMEM here often means the memlock "
                          "limit: ulimit -l)");
  }
  return UniqueMr(mr);
}

Result<UniqueAh> CreateAh(ibv_pd& pd, ibv_ah_attr attr) {
  errno = 0;
  ibv_ah* ah = ibv_create_ah(&pd, &attr);
  if (ah == nullptr) {
    const int err = errno;  // before the detail string is built
    return VerbsError("ibv_create_ah", err,
                      "dlid " + std::to_string(attr.dlid) + ", is_global " +
                          std::to_string(attr.is_global) + ", sgid_index " +
                          std::to_string(attr.grh.sgid_index));
  }
  return UniqueAh(ah);
}

}  // namespace qpconnect::verbs
