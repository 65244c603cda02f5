// SPDX-License-Identifier: MIT
// librdmacm's higher-level entry points: the rdma_create_ep style of
// synchronous ids (rdma_server/rdma_client). rdma_getaddrinfo is
// api_addrinfo.cc's.
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "address.h"
#include "events.h"
#include "log.h"
#include "qp.h"
#include "state.h"
#include "sync.h"

using namespace qpconnect::rdmacm;  // NOLINT: the entry points are in the global namespace

extern "C" {

int rdma_create_ep(rdma_cm_id** out, rdma_addrinfo* res, ibv_pd* pd,
                   ibv_qp_init_attr* qp_init_attr) {
  if (out == nullptr || res == nullptr) return errno = EINVAL, -1;
  rdma_cm_id* cm_id = nullptr;
  if (rdma_create_id(nullptr, &cm_id, nullptr, static_cast<rdma_port_space>(res->ai_port_space)) !=
      0)
    return -1;
  auto fail = [&] {
    int err = errno;
    rdma_destroy_id(cm_id);
    errno = err;
    return -1;
  };
  if (res->ai_flags & RAI_PASSIVE) {
    if (res->ai_src_addr != nullptr && rdma_bind_addr(cm_id, res->ai_src_addr) != 0) return fail();
    LibraryLock lock;
    Id* id = IdOf(cm_id);
    id->ep_passive = true;
    id->pub.pd = pd;
    if (qp_init_attr != nullptr) id->ep_qp_attr = *qp_init_attr;
    *out = cm_id;
    return 0;
  }
  if (rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr, 2000) != 0) return fail();
  if (rdma_resolve_route(cm_id, 2000) != 0) return fail();
  if (qp_init_attr != nullptr && rdma_create_qp(cm_id, pd, qp_init_attr) != 0) return fail();
  *out = cm_id;
  return 0;
}

void rdma_destroy_ep(rdma_cm_id* cm_id) {
  rdma_destroy_qp(cm_id);
  rdma_destroy_id(cm_id);
}

int rdma_get_request(rdma_cm_id* listen, rdma_cm_id** out) {
  if (out == nullptr) return errno = EINVAL, -1;
  Id* lid = nullptr;
  {
    LibraryLock lock;
    lid = IdOf(listen);
    if (lid == nullptr) return -1;
    if (!IsSync(lid)) {
      LogLine("rdma_get_request: the listening id has an event channel (use rdma_get_cm_event)");
      return errno = EINVAL, -1;
    }
  }
  if (Complete(lid) != 0) return -1;
  LibraryLock lock;
  rdma_cm_event* event = lid->pub.event;
  if (EventCode(*event) != RDMA_CM_EVENT_CONNECT_REQUEST) {
    LogLine(std::string("rdma_get_request: got ") + EventName(EventCode(*event)) +
            " instead of a connection request");
    return errno = EINVAL, -1;
  }
  rdma_cm_id* new_id = event->id;
  lid->pub.event = nullptr;
  lock.unlock();
  if (rdma_migrate_id(new_id, nullptr) != 0) return -1;
  lock.lock();
  Id* id = IdOf(new_id);
  id->pub.event = event;  // as librdmacm: the request's event stays readable on the new id
  if (lid->ep_qp_attr) {
    ibv_qp_init_attr attr = *lid->ep_qp_attr;
    if (CreateQp(id, lid->pub.pd, &attr) != 0) {
      int err = errno;
      lock.unlock();
      rdma_reject(new_id, nullptr, 0);
      rdma_destroy_id(new_id);
      errno = err;
      return -1;
    }
  }
  *out = new_id;
  return 0;
}

}  // extern "C"
