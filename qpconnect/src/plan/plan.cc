// SPDX-License-Identifier: MIT
// PlanConnection(): the attributes a side applies, derived from both endpoints.
// The contract is in qpconnect/plan.h; choices the contract leaves open are
// stated where they are made below.
#include "qpconnect/plan.h"

#include <algorithm>
#include <cstddef>

namespace qpconnect {
namespace {

// min() over the valid MTUs among `candidates`; k1024 (the pingpong default and
// QpAttrs' default) when none of them is known.
Mtu NegotiateMtu(std::initializer_list<Mtu> candidates) {
  Mtu best = Mtu::kInvalid;
  for (Mtu m : candidates) {
    if (!IsValidMtu(m)) continue;
    if (best == Mtu::kInvalid || MtuBytes(m) < MtuBytes(best)) best = m;
  }
  return best == Mtu::kInvalid ? Mtu::k1024 : best;
}

// The low `lmc` bits of a LID (the path bits an LMC range leaves to the sender).
uint16_t LmcMask(uint8_t lmc) {
  if (lmc >= 16) return 0xffff;
  return static_cast<uint16_t>((1u << lmc) - 1u);
}

// Hop limit when the user forces none: PlanOptions documents 64 for UD, 64 on
// RoCE, 64 on InfiniBand across subnets (the GRH must cross a router) and 1
// otherwise. A larger hop limit stated in the local path parameters wins (a
// side that says it routes keeps its hop count).
uint8_t DefaultHopLimit(const EndpointInfo& local, bool across_subnets) {
  const bool routed_default = local.transport == Transport::kUd ||
                              local.port.link_layer == LinkLayer::kEthernet || across_subnets;
  const uint8_t by_default = routed_default ? 64 : 1;
  return std::max(by_default, local.path.hop_limit);
}

}  // namespace

ConnectionPlan PlanConnection(const EndpointInfo& local, const EndpointInfo& remote,
                              const PlanOptions& options) {
  ConnectionPlan plan;
  plan.transport = local.transport;
  plan.message_size = options.message_size;

  // A forced MTU is programmed as-is; a side that negotiates follows a peer
  // that forced one (the only way to agree), else takes the minimum.
  // This side forces one by describing it forced (DescribeOptions::mtu, -m).
  const bool local_forced = local.path.path_mtu_forced && IsValidMtu(local.path.path_mtu);
  Mtu path_mtu;
  if (local_forced) {
    path_mtu = local.path.path_mtu;
  } else if (remote.path.path_mtu_forced && IsValidMtu(remote.path.path_mtu)) {
    path_mtu = remote.path.path_mtu;
  } else {
    path_mtu = NegotiateMtu(
        {local.path.path_mtu, remote.path.path_mtu, local.port.active_mtu, remote.port.active_mtu});
  }

  // The peer sends from base LID | its path bits; the hardware uses only the
  // low LMC bits of src_path_bits (IBA vol. 1, 7.11.1 "LMC"), so the mask keeps
  // the DLID equal to the SLID the peer's packets really carry.
  const uint16_t dlid = static_cast<uint16_t>(
      remote.port.lid | (remote.path.src_path_bits & LmcMask(remote.port.lmc)));

  const bool prefixes_differ = local.port.subnet_prefix != 0 && remote.port.subnet_prefix != 0 &&
                               local.port.subnet_prefix != remote.port.subnet_prefix;
  const bool is_global =
      local.path.use_grh || local.port.link_layer == LinkLayer::kEthernet || prefixes_differ;

  AddressVector ah;
  ah.dlid = dlid;
  ah.sl = local.path.sl;
  ah.src_path_bits = local.path.src_path_bits;
  ah.port_num = local.port.port_num;
  ah.is_global = is_global;
  if (remote.path.sgid) ah.dgid = remote.path.sgid->gid;
  // Kept whole: an index above 255 cannot be expressed in ibv_global_route, and
  // the validator says so (sgid-index-too-large) instead of judging a
  // truncated index that may name another valid GID.
  if (local.path.sgid) ah.sgid_index = local.path.sgid->index;
  ah.hop_limit = options.hop_limit.value_or(DefaultHopLimit(local, prefixes_differ));
  ah.traffic_class = local.path.traffic_class;
  ah.flow_label = local.path.flow_label;

  // The SA's path, as rdma_cm applies a resolved route (ucma/ib_cm init the
  // address vector from the PathRecord and the ACK timeout from its packet
  // lifetime).
  uint8_t timeout = options.timeout;
  if (const auto& sa = options.sa_path) {
    if (sa->dlid != 0) {
      ah.dlid = sa->dlid;
      plan.from_sa.push_back("dlid");
    }
    ah.sl = sa->sl;
    plan.from_sa.push_back("sl");
    if (!local_forced && IsValidMtu(sa->mtu)) {
      path_mtu = NegotiateMtu({path_mtu, sa->mtu});
      plan.from_sa.push_back("path_mtu");
    }
    timeout = AckTimeoutForPacketLifetime(sa->packet_lifetime);
    plan.from_sa.push_back("timeout");
    if (sa->rate != 0) {
      ah.static_rate = sa->rate;
      plan.from_sa.push_back("static_rate");
    }
    if (sa->hop_limit > 1) {
      ah.is_global = true;
      ah.hop_limit = options.hop_limit.value_or(sa->hop_limit);
      ah.flow_label = sa->flow_label;
      ah.traffic_class = sa->traffic_class;
      plan.from_sa.insert(plan.from_sa.end(), {"hop_limit", "flow_label", "traffic_class"});
    }
  }

  // Outstanding reads/atomics as initiator: what we ask for, never more than
  // the peer accepts as responder nor our device allows (as rdma_cm
  // negotiates initiator_depth against the peer's responder_resources); as
  // responder, never more than our device allows. An unknown (0) device limit
  // does not cap.
  uint8_t max_rd_atomic = local.rd_atomic.max_rd_atomic;
  uint8_t max_dest_rd_atomic = local.rd_atomic.max_dest_rd_atomic;
  if (local.transport == Transport::kRc) {
    max_rd_atomic = std::min(max_rd_atomic, remote.rd_atomic.max_dest_rd_atomic);
    const auto cap = [](uint8_t v, uint32_t limit) {
      return limit == 0 ? v : static_cast<uint8_t>(std::min<uint32_t>(v, limit));
    };
    max_rd_atomic = cap(max_rd_atomic, local.rd_atomic.device_max_qp_init_rd_atom);
    max_dest_rd_atomic = cap(max_dest_rd_atomic, local.rd_atomic.device_max_qp_rd_atom);
  }

  const size_t n = std::min(local.qps.size(), remote.qps.size());
  plan.qps.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    QpAttrs a;
    a.qp_num = local.qps[i].qpn;
    a.port_num = local.port.port_num;
    a.pkey_index = local.keys.pkey_index;
    a.qkey = local.keys.qkey;
    a.remote_qkey = local.keys.remote_qkey;
    a.path_mtu = path_mtu;
    a.dest_qp_num = remote.qps[i].qpn;
    a.rq_psn = remote.qps[i].psn;
    a.sq_psn = local.qps[i].psn;
    a.max_rd_atomic = max_rd_atomic;
    a.max_dest_rd_atomic = max_dest_rd_atomic;
    a.min_rnr_timer = options.min_rnr_timer;
    a.timeout = timeout;
    a.retry_cnt = options.retry_cnt;
    a.rnr_retry = options.rnr_retry;
    a.ah = ah;
    plan.qps.push_back(a);
  }
  return plan;
}

}  // namespace qpconnect
