// SPDX-License-Identifier: MIT
// Enhanced Connection Establishment (ECE) over the out-of-band exchange, as
// librdmacm and the IB CM carry it (rdma_set_local_ece(3),
// rdma_get_remote_ece(3); rdma-core's cma.c and the kernel's cm.c read for
// their behaviour):
//
//   - a REQ carries the active side's ECE: what rdma_set_local_ece stored,
//     or, for a QP rdma_create_qp made, what the provider reports
//     (ibv_query_ece; none where the provider has none, as on rxe);
//   - the passive id's remote ECE is the REQ's; a QP rdma_create_qp makes
//     for it is set to it (ibv_set_ece), or, when the vendors differ, to
//     this side's vendor with no options (RequestQpEce);
//   - a REP carries the request's vendor with the passive side's options
//     (ReplyEce); the active id's remote ECE is the REP's, and its QP is set
//     to it before RTR (ReplyQpEce; a REP naming another vendor is refused);
//   - rdma_reject_ece rejects with reason 35, the IB CM's "vendor option not
//     supported".
// The IB CM's REQ and REP hold a vendor id of 24 bits (the options go whole
// in the MAD's attribute modifier): OnWire keeps what the IB CM keeps.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "qpconnect/result.h"
#include "state.h"

namespace qpconnect::rdmacm {

inline constexpr uint32_t kEceVendorMask = 0x00ffffff;           // the IB CM's Vendor ID field
inline constexpr uint16_t kRejectVendorOptionNotSupported = 35;  // rdma_reject_ece's reason

// What a REQ or REP carries of `ece`: the vendor id's low 24 bits.
Ece OnWire(const Ece& ece);

// rdma_set_local_ece's checks, as librdmacm's: "" or why the call is
// EINVAL (the id has a QP; no vendor; a comp_mask set).
std::string LocalEceRefusal(bool has_qp, uint32_t vendor_id, uint32_t comp_mask);

// The REP's ECE: the request's vendor, this side's options.
Ece ReplyEce(const Ece& local, const Ece& remote);

// For a QP made for a received request (librdmacm's init_ece), from the
// provider's ECE and the request's: what to set the QP to, or nothing when
// the request carried none (vendor 0).
struct EceToSet {
  bool set = false;
  Ece ece;
};
EceToSet RequestQpEce(const Ece& provider, const Ece& remote);

// For the active QP when the REP arrives (librdmacm's
// ucma_process_conn_resp_ece): what to set it to (a REP without ECE: this
// side's vendor, no options). kIncompatible (EINVAL) when the REP names
// another vendor than this side's.
Result<Ece> ReplyQpEce(const Ece& local, const Ece& reply);

}  // namespace qpconnect::rdmacm
