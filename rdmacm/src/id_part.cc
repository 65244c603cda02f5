// SPDX-License-Identifier: MIT
#include "id_part.h"

#include <infiniband/verbs.h>

#include <string>

namespace qpconnect::rdmacm {

void ApplyIdPart(EndpointInfo& e, const IdPart& part) {
  e.transport = part.transport;
  e.keys.qkey = part.qkey;
  e.rd_atomic.max_rd_atomic = part.initiator_depth;
  e.rd_atomic.max_dest_rd_atomic = part.responder_resources;
  e.qps.assign(1, QpEntry{part.qpn, part.psn, std::nullopt});
  e.path.traffic_class = part.traffic_class;
}

Result<IdPart> IdPartOf(const Message& msg) {
  auto bad = [&](const char* field, const std::string& why) {
    return Error(ErrorCode::kProtocol, 0, std::string("read ") + MsgTypeName(msg.type), field, why);
  };
  IdPart part;
  if (msg.qp_type == IBV_QPT_RC)
    part.transport = Transport::kRc;
  else if (msg.qp_type == IBV_QPT_UD)
    part.transport = Transport::kUd;
  else
    return bad("qp_type",
               "QP type " + std::to_string(msg.qp_type) + " is neither RC (2) nor UD (4)");
  if (msg.params.qp_num > kQpnMask)
    return bad("qp_num", "QPN " + std::to_string(msg.params.qp_num) + " exceeds 24 bits");
  if (msg.psn > kPsnMask) return bad("psn", "PSN " + std::to_string(msg.psn) + " exceeds 24 bits");
  part.qkey = msg.qkey;
  part.initiator_depth = msg.params.initiator_depth;
  part.responder_resources = msg.params.responder_resources;
  part.qpn = msg.params.qp_num;
  part.psn = msg.psn;
  part.traffic_class = msg.traffic_class;
  return part;
}

}  // namespace qpconnect::rdmacm
