// SPDX-License-Identifier: MIT
// The QP side of an id: rdma_create_qp's QP and its moves, this side's
// endpoint description, and the plan and validation that come before any
// modify. The moves are the connector's own steps (qpconnect/verbs/qp_steps.h),
// so a refusal names transition, mask, values and cause exactly as
// qp-connect's do.
//
// librdmacm's states, kept: rdma_create_qp leaves an RC QP in INIT and takes
// a UD QP to RTS (Q_Key RDMA_UDP_QKEY); the active side goes RTR and RTS when
// the reply arrives, the passive side RTR at rdma_accept and RTS at the RTU.
//
// Thread-safety: REQUIRE library_mutex held (lock.h).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <vector>

#include "qp_resources.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "state.h"

namespace qpconnect::rdmacm {

// rdma_create_qp/_ex. 0, or -1 with errno (EINVAL: no device yet, a PD of
// another device; the verbs call's errno otherwise), with the reason logged.
int CreateQp(Id* id, ibv_pd* pd, ibv_qp_init_attr* attr) QPCM_REQUIRES(library_mutex);
int CreateQpEx(Id* id, ibv_qp_init_attr_ex* attr) QPCM_REQUIRES(library_mutex);
// rdma_destroy_qp: the QP and the CQs CreateQp made (id->qp_owned).
void DestroyQp(Id* id) QPCM_REQUIRES(library_mutex);
// rdma_destroy_id of an id whose QP the program did not destroy: as with
// librdmacm, the QP and its CQs stay the program's (it may still use them),
// so the owners let go of them instead of destroying them.
void LeaveQpToProgram(Id* id) QPCM_REQUIRES(library_mutex);

// This side's description (id->local) for the id's QP, or conn_param's
// qp_num when the program brings its own QP.
Result<void> DescribeSide(Id* id) QPCM_REQUIRES(library_mutex);
// The composer's agreement (qpconnect/composer.h) on the id's two
// descriptions: the joint GID choice (`link_ends`, the out-of-band link's two
// ends as GIDs, preferred), the RoCE path facts, the plan (the program's
// retry counts, ACK timeout and TOS) into id->plan, the validator. Every
// error finding is logged; kIncompatible (operation "validate", attribute
// the first rule) when one is an error.
Result<void> PlanAndValidate(Id* id, bool active, std::vector<Gid> link_ends)
    QPCM_REQUIRES(library_mutex);

// The composer's apply: the chosen GID read again, then the id's QP
// INIT->RTR->RTS to id->plan. kIncompatible (IsGidChanged(), the finding
// logged) when the GID changed since the agreement: nothing modified;
// kVerbs naming transition, mask, values and cause. Ok without a QP.
Result<void> QpConnect(Id* id) QPCM_REQUIRES(library_mutex);
// The id's QP set to `ece` (ibv_set_ece; ece.h): ok without a QP or where
// the provider has no ECE (EOPNOTSUPP); kVerbs otherwise.
Result<void> SetQpEce(Id* id, const Ece& ece) QPCM_REQUIRES(library_mutex);
// The QP to ERROR (a refused or ended connection); no-op without a QP.
void QpToError(Id* id) QPCM_REQUIRES(library_mutex);

// rdma_init_qp_attr: the attributes and mask of the transition into
// qp_attr->qp_state (INIT, RTR, RTS) as this library would apply them.
int InitQpAttr(Id* id, ibv_qp_attr* qp_attr, int* qp_attr_mask) QPCM_REQUIRES(library_mutex);

// UD: the address handle attributes for the peer (from the plan).
ibv_ah_attr PeerAh(const Id* id) QPCM_REQUIRES(library_mutex);

}  // namespace qpconnect::rdmacm
