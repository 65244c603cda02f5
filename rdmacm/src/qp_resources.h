// SPDX-License-Identifier: MIT
// What rdma_create_qp made for an id, owned until rdma_destroy_qp: the QP
// and, when the program named no CQs, the CQs and completion channels
// librdmacm makes. The ABI hands the program raw pointers to them (the id's
// rdma_cm_id); these are their owners (qp.h makes and frees them; an id
// destroyed with its QP alive leaves it to the program: LeaveQpToProgram).
//
// Thread-safety: as the id that holds it (library_mutex, lock.h).
#pragma once

#include "qpconnect/verbs/resources.h"

namespace qpconnect::rdmacm {

// Members in creation order: destroyed in reverse.
struct QpResources {
  verbs::UniqueCompChannel recv_channel, send_channel;
  verbs::UniqueCq recv_cq, send_cq;
  verbs::UniqueQp qp;
};

}  // namespace qpconnect::rdmacm
