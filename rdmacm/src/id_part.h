// SPDX-License-Identifier: MIT
// The part of an endpoint description that differs between two ids on the
// same device port: the transport, the Q_Key, the rd_atomic depths, the one
// QP's number and PSN, and its traffic class (the program's TOS). A REQ or REP carries it in its header (wire.h:
// qp_type, qkey, params, psn); the rest of the description, the base (device,
// port, GID table, path), travels once per link (Message::base), so that a
// thousand requests over one link are not a thousand descriptions encoded,
// sent and decoded (issue 29's speed).
//
// This side's id->local and the peer's description are both made with
// ApplyIdPart, so the two ends agree on which fields are per id.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "wire.h"

namespace qpconnect::rdmacm {

struct IdPart {
  Transport transport = Transport::kRc;
  uint32_t qkey = 0;
  uint8_t initiator_depth = 0;      // the description's rd_atomic.max_rd_atomic
  uint8_t responder_resources = 0;  // its rd_atomic.max_dest_rd_atomic
  uint32_t qpn = 0;                 // 24-bit
  uint32_t psn = 0;                 // 24-bit
  uint8_t traffic_class = 0;        // its path's GRH traffic class (the id's TOS)
};

// `e` with its per-id fields set from `part`: exactly one QP.
void ApplyIdPart(EndpointInfo& e, const IdPart& part);

// The sender's part from a REQ's or REP's header. kProtocol naming the field
// when the QP type is neither RC nor UD or the QPN or PSN exceeds 24 bits.
Result<IdPart> IdPartOf(const Message& msg);

}  // namespace qpconnect::rdmacm
