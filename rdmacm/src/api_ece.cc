// SPDX-License-Identifier: MIT
// librdmacm's ECE entry points (RDMACM_1.3; rdma_set_local_ece(3),
// rdma_get_remote_ece(3)), carried over the out-of-band exchange (ece.h):
// the ECE a program sets goes in its REQ or REP, the peer's comes out of
// them, and rdma_reject_ece rejects with the IB CM's reason 35.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <string>

#include "cm.h"
#include "ece.h"
#include "log.h"
#include "state.h"

using namespace qpconnect::rdmacm;  // NOLINT: the entry points are in the global namespace

extern "C" {

// Stores the ECE for the id's REQ (active) or REP (passive); as librdmacm's,
// for a program that makes its own QP: EINVAL once the id has one.
int rdma_set_local_ece(rdma_cm_id* cm_id, ibv_ece* ece) {
  if (ece == nullptr) return Fail(EINVAL, "rdma_set_local_ece: no ECE");
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (auto why = LocalEceRefusal(id->pub.qp != nullptr, ece->vendor_id, ece->comp_mask);
      !why.empty())
    return Fail(EINVAL, "rdma_set_local_ece: " + why);
  id->local_ece = Ece{ece->vendor_id, ece->options};
  return 0;
}

// The ECE the peer's REQ (passive) or REP (active) carried; zero before one
// came, or from a peer that sent none. EINVAL once the id has a QP, as
// librdmacm's.
int rdma_get_remote_ece(rdma_cm_id* cm_id, ibv_ece* ece) {
  if (ece == nullptr) return Fail(EINVAL, "rdma_get_remote_ece: no place for the ECE");
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  if (id->pub.qp != nullptr)
    return Fail(EINVAL,
                "rdma_get_remote_ece: the id has a QP (its ECE is set from the peer's by the "
                "library; rdma_get_remote_ece is for a QP the program made)");
  ece->vendor_id = id->remote_ece.vendor_id;
  ece->options = id->remote_ece.options;
  ece->comp_mask = 0;
  return 0;
}

// rdma_reject with the IB CM's reason 35 ("vendor option not supported"):
// the peer's REJECTED event has status 35.
int rdma_reject_ece(rdma_cm_id* cm_id, const void* private_data, uint8_t private_data_len) {
  LibraryLock lock;
  Id* id = IdOf(cm_id);
  if (id == nullptr) return -1;
  return Reject(id, private_data, private_data_len, kRejectVendorOptionNotSupported);
}

}  // extern "C"
