// SPDX-License-Identifier: MIT
// librdmacm's entry points for connections and their QPs.
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <string>

#include "cm.h"
#include "devices.h"
#include "log.h"
#include "qp.h"
#include "state.h"
#include "sync.h"

using namespace qpconnect::rdmacm;  // NOLINT: the entry points are in the global namespace

namespace {

// A synchronous id's call returns once its event is there.
int Wait(Id* id, LibraryLock& lock, int rc)
    // Lets go of the caller's lock for a synchronous id's wait (the
    // caller's LibraryLock knows it is released; its scope ends soon after):
    // the analysis cannot follow a lock passed by reference.
    QPCM_NO_THREAD_SAFETY_ANALYSIS {
  if (rc != 0 || !IsSync(id)) return rc;
  lock.unlock();
  return Complete(id);
}

}  // namespace

extern "C" {

int rdma_connect(rdma_cm_id* cm_id, rdma_conn_param* conn_param) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return Wait(id, lock, Connect(id, conn_param));
}

int rdma_accept(rdma_cm_id* cm_id, rdma_conn_param* conn_param) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  int rc = Accept(id, conn_param);
  if (id->pub.ps == RDMA_PS_UDP) return rc;  // no ESTABLISHED on the passive side of UD
  return Wait(id, lock, rc);
}

int rdma_reject(rdma_cm_id* cm_id, const void* private_data, uint8_t private_data_len) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return Reject(id, private_data, private_data_len);
}

int rdma_disconnect(rdma_cm_id* cm_id) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  bool reported = id->disconnect_reported;
  int rc = Disconnect(id);
  if (reported || id->pub.ps == RDMA_PS_UDP) return rc;
  return Wait(id, lock, rc);
}

int rdma_establish(rdma_cm_id* cm_id) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return Establish(id);
}

int rdma_create_qp(rdma_cm_id* cm_id, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  QPCM_DEBUG_LINE("create_qp locked id " + std::to_string(id->handle));
  return CreateQp(id, pd, qp_init_attr);
}

int rdma_create_qp_ex(rdma_cm_id* cm_id, ibv_qp_init_attr_ex* qp_init_attr) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return CreateQpEx(id, qp_init_attr);
}

void rdma_destroy_qp(rdma_cm_id* cm_id) {
  LibraryLock lock;
  if (Id* id = IdOf(cm_id)) DestroyQp(id);
}

int rdma_init_qp_attr(rdma_cm_id* cm_id, ibv_qp_attr* qp_attr, int* qp_attr_mask) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return InitQpAttr(id, qp_attr, qp_attr_mask);
}

int rdma_create_srq(rdma_cm_id* cm_id, ibv_pd* pd, ibv_srq_init_attr* attr) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (id->device == nullptr || attr == nullptr) return errno = EINVAL, -1;
  if (pd == nullptr) {
    auto def = DefaultPd(*id->device);
    if (!def) return errno = def.error().sys_errno, -1;
    pd = *def;
  }
  id->pub.srq = ibv_create_srq(pd, attr);
  if (id->pub.srq == nullptr) return -1;
  id->pub.pd = pd;
  return 0;
}

int rdma_create_srq_ex(rdma_cm_id* cm_id, ibv_srq_init_attr_ex* attr) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (id->device == nullptr || attr == nullptr) return errno = EINVAL, -1;
  if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == nullptr) {
    auto def = DefaultPd(*id->device);
    if (!def) return errno = def.error().sys_errno, -1;
    attr->pd = *def;
    attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
  }
  id->pub.srq = ibv_create_srq_ex(id->pub.verbs, attr);
  return id->pub.srq != nullptr ? 0 : -1;
}

void rdma_destroy_srq(rdma_cm_id* cm_id) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr || id->pub.srq == nullptr) return;
  ibv_destroy_srq(id->pub.srq);
  id->pub.srq = nullptr;
}

}  // extern "C"
