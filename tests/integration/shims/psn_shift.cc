// SPDX-License-Identifier: MIT
// Test-only LD_PRELOAD shim: wraps ibv_modify_qp and, at the transition to
// RTR, adds QPC_SHIM_RQ_PSN_ADD (default 999) to rq_psn, so that an unmodified
// program's receiver expects PSNs its peer has not sent: both QPs reach RTS,
// every packet is discarded as a duplicate, and the programs wait forever
// (docs/inspect.md; lab test lab_inspect_psn_shift). Every other call goes
// through unchanged. Says what it changed on stderr.
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace {

using ModifyQpFn = int (*)(ibv_qp*, ibv_qp_attr*, int);

ModifyQpFn Next() {
  static ModifyQpFn next =
      reinterpret_cast<ModifyQpFn>(dlvsym(RTLD_NEXT, "ibv_modify_qp", "IBVERBS_1.1"));
  return next;
}

unsigned Shift() {
  const char* s = std::getenv("QPC_SHIM_RQ_PSN_ADD");
  return s != nullptr ? static_cast<unsigned>(std::strtoul(s, nullptr, 0)) : 999u;
}

}  // namespace

extern "C" int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
  ModifyQpFn next = Next();
  if (next == nullptr) return ENOSYS;
  const int want = IBV_QP_STATE | IBV_QP_RQ_PSN;
  if ((attr_mask & want) != want || attr->qp_state != IBV_QPS_RTR) return next(qp, attr, attr_mask);
  ibv_qp_attr shifted = *attr;
  shifted.rq_psn = (attr->rq_psn + Shift()) & 0xffffffu;
  std::fprintf(stderr, "psn-shift shim: QP %u at RTR: rq_psn %u -> %u\n", qp->qp_num, attr->rq_psn,
               shifted.rq_psn);
  return next(qp, &shifted, attr_mask);
}
