// SPDX-License-Identifier: MIT
// The connection plan: the attributes one side is about to apply to its QPs
// with ibv_modify_qp, in verbs-free value types.
//
// PlanConnection() derives the plan the connector applies from the two
// endpoint descriptions (path MTU negotiated as the minimum, GRH on RoCE, the
// peer's QPN and PSN as dest_qp_num and rq_psn, ...). The validator judges a
// plan against both endpoints; a plan can also come from elsewhere (forced
// options, a dump, a trace of another program's ibv_modify_qp calls), which is
// why it is a value of its own and not recomputed inside the validator.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/path_record.h"

namespace qpconnect {

// Mirror of struct ibv_ah_attr (with its ibv_global_route).
struct AddressVector {
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  uint8_t port_num = 1;
  bool is_global = false;
  Gid dgid{};
  // The GID table index, as large as the table (rxe tables hold 1024 entries);
  // ibv_global_route.sgid_index is 8 bits, so above 255 the validator refuses
  // (sgid-index-too-large) and the verbs layer never truncates it.
  uint16_t sgid_index = 0;
  uint8_t hop_limit = 1;
  uint8_t traffic_class = 0;
  uint32_t flow_label = 0;
  // IBA static-rate code (the values of enum ibv_rate: 2 = 2.5 Gb/s, 3 = 10,
  // ...): inject no faster than the path allows; 0 = the port's full rate.
  uint8_t static_rate = 0;

  friend bool operator==(const AddressVector&, const AddressVector&) = default;
};

// Mirror of the struct ibv_qp_attr fields used to connect one QP. Which of them
// are sent at which transition is the verbs layer's business (the mask table).
struct QpAttrs {
  uint32_t qp_num = 0;                  // the local QP these attributes are for
  uint8_t port_num = 1;                 // INIT
  uint16_t pkey_index = 0;              // INIT
  uint32_t qkey = 0;                    // INIT (UD)
  Mtu path_mtu = Mtu::k1024;            // RTR (RC, UC)
  uint32_t dest_qp_num = 0;             // RTR (RC, UC); UD: remote_qpn of send WRs
  uint32_t rq_psn = 0;                  // RTR (RC, UC)
  uint32_t sq_psn = 0;                  // RTS
  uint8_t max_rd_atomic = 1;            // RTS (RC)
  uint8_t max_dest_rd_atomic = 1;       // RTR (RC)
  uint8_t min_rnr_timer = 12;           // RTR (RC); 0 means 655.36 ms
  uint8_t timeout = 14;                 // RTS (RC); 0 means infinite
  uint8_t retry_cnt = 7;                // RTS (RC), 0..7
  uint8_t rnr_retry = 7;                // RTS (RC), 0..7 (7 = infinite)
  AddressVector ah;                     // RTR (RC, UC); UD: the address handle
  std::optional<uint32_t> remote_qkey;  // UD: Q_Key put in send WRs, if not the peer's

  friend bool operator==(const QpAttrs&, const QpAttrs&) = default;
};

struct ConnectionPlan {
  Transport transport = Transport::kRc;
  // One entry per local QP, in the order of EndpointInfo::qps; entry i is
  // connected to the peer's QP i.
  std::vector<QpAttrs> qps;
  // Largest message this side will send (UD: must fit the path MTU).
  uint32_t message_size = 0;
  // The attributes taken from PlanOptions::sa_path ("dlid", "sl", "path_mtu",
  // "timeout", "static_rate", "hop_limit", "flow_label", "traffic_class"), in
  // that order;
  // empty when no PathRecord was given.
  std::vector<std::string> from_sa;

  friend bool operator==(const ConnectionPlan&, const ConnectionPlan&) = default;
};

// Choices the user may force; unset means "negotiate". The path MTU is not
// among them: it is forced by describing it forced (DescribeOptions::mtu,
// the tools' -m, the C API's open and adopt options' mtu), which both
// sides' plans follow.
struct PlanOptions {
  std::optional<uint8_t>
      hop_limit;  // GRH hop limit (default 64 for UD, on RoCE and across IB subnets; else 1)
  uint8_t min_rnr_timer = 12;
  uint8_t timeout = 14;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint32_t message_size = 4096;
  // The subnet administrator's PathRecord from the local port to the remote
  // one (qpconnect/sa/path_resolver.h), on InfiniBand. When set, the plan
  // takes from it what rdma_cm takes: see PlanConnection.
  std::optional<PathRecord> sa_path;
};

// Derives the attributes `local` applies to connect each of its QPs to the
// peer's QP of the same position in `remote`. Pure: it never fails; a plan
// built from inconsistent endpoints is what the validator then flags.
//   path_mtu   = local.path.path_mtu if local forced it; else
//                remote.path.path_mtu if the peer forced it; else min(both sides'
//                path_mtu and active_mtu) over the known ones (1024 if none)
//   dest_qp_num, rq_psn = the peer QP's qpn and psn; sq_psn = the local QP's psn
//   ah.dlid    = remote.port.lid | remote.path.src_path_bits (the peer's source
//                LID: the IB spec's SLID = base LID with the low LMC bits set to
//                src_path_bits); ah.src_path_bits = local.path.src_path_bits
//   ah.is_global = local.path.use_grh, or always on Ethernet ports, or when the
//                subnet prefixes differ; dgid = remote.path.sgid->gid;
//                sgid_index = local.path.sgid->index
//   max_rd_atomic = min(local.rd_atomic.max_rd_atomic, the peer's
//                max_dest_rd_atomic, the local device's max_qp_init_rd_atom)
//                on RC (an unknown = 0 device limit does not cap), as rdma_cm
//                negotiates; max_dest_rd_atomic = local.rd_atomic.max_dest_rd_atomic
//                capped by the local device's max_qp_rd_atom
//   ah.hop_limit = options.hop_limit; else 64 for UD, on Ethernet and on
//                InfiniBand across subnets, 1 otherwise (or local.path.hop_limit
//                if larger)
//   qkey       = local.keys.qkey; remote_qkey = local.keys.remote_qkey
// With options.sa_path (the SA's PathRecord), as rdma_cm programs a resolved
// route: ah.dlid = its DLID (when non-zero); ah.sl = its SL; path_mtu = the
// smaller of the above and its MTU unless this side forces one; timeout =
// its packet lifetime + 1 (AckTimeoutForPacketLifetime); ah.static_rate = its
// rate (when non-zero; ibv_rate uses the IBA codes); and when its hop
// limit is above 1 (the path crosses routers) is_global with its hop limit,
// flow label and traffic class. plan.from_sa names what it changed or
// confirmed. Its P_Key is not applied here (the P_Key index is the caller's;
// the validator's pkey-not-sa-path checks it).
// When the QP counts differ, only min(N, M) entries are produced.
ConnectionPlan PlanConnection(const EndpointInfo& local, const EndpointInfo& remote,
                              const PlanOptions& options = {});

}  // namespace qpconnect
