#include "qpconnect/verbs/qp_attrs.h"

#include <cstdio>
#include <cstring>

// Mtu's values are libibverbs' enum ibv_mtu, so the two convert by value.
static_assert(static_cast<int>(qpconnect::Mtu::k256) == IBV_MTU_256);
static_assert(static_cast<int>(qpconnect::Mtu::k512) == IBV_MTU_512);
static_assert(static_cast<int>(qpconnect::Mtu::k1024) == IBV_MTU_1024);
static_assert(static_cast<int>(qpconnect::Mtu::k2048) == IBV_MTU_2048);
static_assert(static_cast<int>(qpconnect::Mtu::k4096) == IBV_MTU_4096);

namespace qpconnect::verbs {
namespace {

std::string Hex(uint32_t v, int width) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*x", width, v);
  return buf;
}

struct MaskName {
  int bit;
  const char* name;
};
constexpr MaskName kMaskNames[] = {
    {IBV_QP_STATE, "STATE"},
    {IBV_QP_CUR_STATE, "CUR_STATE"},
    {IBV_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY"},
    {IBV_QP_ACCESS_FLAGS, "ACCESS_FLAGS"},
    {IBV_QP_PKEY_INDEX, "PKEY_INDEX"},
    {IBV_QP_PORT, "PORT"},
    {IBV_QP_QKEY, "QKEY"},
    {IBV_QP_AV, "AV"},
    {IBV_QP_PATH_MTU, "PATH_MTU"},
    {IBV_QP_TIMEOUT, "TIMEOUT"},
    {IBV_QP_RETRY_CNT, "RETRY_CNT"},
    {IBV_QP_RNR_RETRY, "RNR_RETRY"},
    {IBV_QP_RQ_PSN, "RQ_PSN"},
    {IBV_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC"},
    {IBV_QP_ALT_PATH, "ALT_PATH"},
    {IBV_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER"},
    {IBV_QP_SQ_PSN, "SQ_PSN"},
    {IBV_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC"},
    {IBV_QP_PATH_MIG_STATE, "PATH_MIG_STATE"},
    {IBV_QP_CAP, "CAP"},
    {IBV_QP_DEST_QPN, "DEST_QPN"},
    {IBV_QP_RATE_LIMIT, "RATE_LIMIT"},
};

std::string DescribeAh(const ibv_ah_attr& ah) {
  std::string s = "{dlid=" + std::to_string(ah.dlid) + " sl=" + std::to_string(ah.sl) +
                  " src_path_bits=" + std::to_string(ah.src_path_bits) +
                  " port_num=" + std::to_string(ah.port_num) +
                  " is_global=" + std::to_string(ah.is_global);
  if (ah.static_rate != 0) s += " static_rate=" + std::to_string(ah.static_rate);
  if (ah.is_global != 0) {
    Gid g{};
    std::memcpy(g.data(), ah.grh.dgid.raw, g.size());
    s += " dgid=" + GidToString(g) + " sgid_index=" + std::to_string(ah.grh.sgid_index) +
         " hop_limit=" + std::to_string(ah.grh.hop_limit) +
         " traffic_class=" + std::to_string(ah.grh.traffic_class) +
         " flow_label=" + Hex(ah.grh.flow_label, 5);
  }
  return s + "}";
}

}  // namespace

const char* QpStateName(QpState s) {
  switch (s) {
    case QpState::kReset:
      return "RESET";
    case QpState::kInit:
      return "INIT";
    case QpState::kRtr:
      return "RTR";
    case QpState::kRts:
      return "RTS";
    case QpState::kSqd:
      return "SQD";
    case QpState::kSqe:
      return "SQE";
    case QpState::kErr:
      return "ERR";
    case QpState::kUnknown:
      break;
  }
  return "UNKNOWN";
}

ibv_qp_state ToIbvState(QpState s) {
  switch (s) {
    case QpState::kReset:
      return IBV_QPS_RESET;
    case QpState::kInit:
      return IBV_QPS_INIT;
    case QpState::kRtr:
      return IBV_QPS_RTR;
    case QpState::kRts:
      return IBV_QPS_RTS;
    case QpState::kSqd:
      return IBV_QPS_SQD;
    case QpState::kSqe:
      return IBV_QPS_SQE;
    case QpState::kErr:
      return IBV_QPS_ERR;
    case QpState::kUnknown:
      break;
  }
  return IBV_QPS_UNKNOWN;
}

QpState FromIbvState(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET:
      return QpState::kReset;
    case IBV_QPS_INIT:
      return QpState::kInit;
    case IBV_QPS_RTR:
      return QpState::kRtr;
    case IBV_QPS_RTS:
      return QpState::kRts;
    case IBV_QPS_SQD:
      return QpState::kSqd;
    case IBV_QPS_SQE:
      return QpState::kSqe;
    case IBV_QPS_ERR:
      return QpState::kErr;
    default:
      return QpState::kUnknown;
  }
}

ibv_qp_type ToIbvQpType(Transport t) {
  switch (t) {
    case Transport::kRc:
      return IBV_QPT_RC;
    case Transport::kUc:
      return IBV_QPT_UC;
    case Transport::kUd:
      return IBV_QPT_UD;
  }
  return IBV_QPT_RC;
}

TransitionMasks MasksFor(Transport transport, QpState to) {
  // Required: ibv_modify_qp(3). Optional: the IB spec's QP/EE state
  // transition table (vol. 1, 11.2.5), restricted to what the connector uses.
  switch (to) {
    case QpState::kInit:
      if (transport == Transport::kUd) {
        return {IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0};
      }
      return {IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0};
    case QpState::kRtr:
      switch (transport) {
        case Transport::kRc:
          return {IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX};
        case Transport::kUc:
          return {IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
                  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX};
        case Transport::kUd:
          return {IBV_QP_STATE, IBV_QP_PKEY_INDEX | IBV_QP_QKEY};
      }
      break;
    case QpState::kRts:
      switch (transport) {
        case Transport::kRc:
          return {IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
                  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
                      IBV_QP_PATH_MIG_STATE};
        case Transport::kUc:
          return {IBV_QP_STATE | IBV_QP_SQ_PSN,
                  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE};
        case Transport::kUd:
          return {IBV_QP_STATE | IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY};
      }
      break;
    default:
      break;
  }
  return {IBV_QP_STATE, 0};
}

Result<void> CheckAddressVector(const AddressVector& av) {
  if (!av.is_global) return Ok();
  if (av.sgid_index > kMaxSgidIndex) {
    return Error{ErrorCode::kInvalidArgument, 0, "build address vector", "sgid_index",
                 "sgid_index " + std::to_string(av.sgid_index) +
                     " does not fit ibv_global_route's 8 bits; it would select GID " +
                     std::to_string(av.sgid_index & 0xff) + " instead (use an index 0..255)"};
  }
  if (av.flow_label > kFlowLabelMask) {
    return Error{ErrorCode::kInvalidArgument, 0, "build address vector", "flow_label",
                 "flow_label " + std::to_string(av.flow_label) + " exceeds 20 bits"};
  }
  return Ok();
}

ibv_ah_attr ToAhAttr(const AddressVector& av) {
  ibv_ah_attr ah{};
  ah.dlid = av.dlid;
  ah.sl = av.sl;
  ah.src_path_bits = av.src_path_bits;
  ah.port_num = av.port_num;
  ah.is_global = av.is_global ? 1 : 0;
  ah.static_rate = av.static_rate;  // IBA code == enum ibv_rate
  if (av.is_global) {
    std::memcpy(ah.grh.dgid.raw, av.dgid.data(), av.dgid.size());
    ah.grh.sgid_index = static_cast<uint8_t>(av.sgid_index);  // REQUIRES: <= 255
    ah.grh.hop_limit = av.hop_limit;
    ah.grh.traffic_class = av.traffic_class;
    ah.grh.flow_label = av.flow_label;
  }
  return ah;
}

ModifyRequest BuildInit(Transport transport, const QpAttrs& a, unsigned access_flags) {
  ModifyRequest r;
  r.from = QpState::kReset;
  r.to = QpState::kInit;
  r.attr.qp_state = IBV_QPS_INIT;
  r.attr.pkey_index = a.pkey_index;
  r.attr.port_num = a.port_num;
  if (transport == Transport::kUd) {
    r.attr.qkey = a.qkey;
  } else {
    r.attr.qp_access_flags = access_flags;
  }
  r.mask = MasksFor(transport, QpState::kInit).required;
  return r;
}

ModifyRequest BuildRtr(Transport transport, const QpAttrs& a) {
  ModifyRequest r;
  r.from = QpState::kInit;
  r.to = QpState::kRtr;
  r.attr.qp_state = IBV_QPS_RTR;
  if (transport != Transport::kUd) {
    r.attr.path_mtu = static_cast<ibv_mtu>(a.path_mtu);
    r.attr.dest_qp_num = a.dest_qp_num;
    r.attr.rq_psn = a.rq_psn;
    r.attr.ah_attr = ToAhAttr(a.ah);
  }
  if (transport == Transport::kRc) {
    r.attr.max_dest_rd_atomic = a.max_dest_rd_atomic;
    r.attr.min_rnr_timer = a.min_rnr_timer;
  }
  r.mask = MasksFor(transport, QpState::kRtr).required;
  return r;
}

ModifyRequest BuildRts(Transport transport, const QpAttrs& a) {
  ModifyRequest r;
  r.from = QpState::kRtr;
  r.to = QpState::kRts;
  r.attr.qp_state = IBV_QPS_RTS;
  r.attr.sq_psn = a.sq_psn;
  if (transport == Transport::kRc) {
    r.attr.timeout = a.timeout;
    r.attr.retry_cnt = a.retry_cnt;
    r.attr.rnr_retry = a.rnr_retry;
    r.attr.max_rd_atomic = a.max_rd_atomic;
  }
  r.mask = MasksFor(transport, QpState::kRts).required;
  return r;
}

ModifyRequest BuildReset(Transport transport) {
  ModifyRequest r;
  r.from = QpState::kUnknown;
  r.to = QpState::kReset;
  r.attr.qp_state = IBV_QPS_RESET;
  r.mask = MasksFor(transport, QpState::kReset).required;
  return r;
}

std::string DecodeMask(int mask) {
  std::string s;
  int rest = mask;
  for (const auto& m : kMaskNames) {
    if ((mask & m.bit) != 0) {
      s += (s.empty() ? "" : "|");
      s += m.name;
      rest &= ~m.bit;
    }
  }
  if (rest != 0) s += (s.empty() ? "" : "|") + Hex(static_cast<uint32_t>(rest), 1);
  return s.empty() ? "0" : s;
}

std::string DescribeAttr(const ibv_qp_attr& a, int mask) {
  std::string s;
  auto add = [&s](const std::string& kv) { s += (s.empty() ? "" : " ") + kv; };
  if (mask & IBV_QP_STATE) add(std::string("qp_state=") + QpStateName(FromIbvState(a.qp_state)));
  if (mask & IBV_QP_PKEY_INDEX) add("pkey_index=" + std::to_string(a.pkey_index));
  if (mask & IBV_QP_PORT) add("port_num=" + std::to_string(a.port_num));
  if (mask & IBV_QP_ACCESS_FLAGS) add("qp_access_flags=" + Hex(a.qp_access_flags, 1));
  if (mask & IBV_QP_QKEY) add("qkey=" + Hex(a.qkey, 8));
  if (mask & IBV_QP_PATH_MTU) {
    add("path_mtu=" + std::to_string(MtuBytes(static_cast<Mtu>(a.path_mtu))) + " (enum " +
        std::to_string(a.path_mtu) + ")");
  }
  if (mask & IBV_QP_DEST_QPN) add("dest_qp_num=" + Hex(a.dest_qp_num, 6));
  if (mask & IBV_QP_RQ_PSN) add("rq_psn=" + Hex(a.rq_psn, 6));
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
    add("max_dest_rd_atomic=" + std::to_string(a.max_dest_rd_atomic));
  }
  if (mask & IBV_QP_MIN_RNR_TIMER) add("min_rnr_timer=" + std::to_string(a.min_rnr_timer));
  if (mask & IBV_QP_AV) add("ah_attr=" + DescribeAh(a.ah_attr));
  if (mask & IBV_QP_SQ_PSN) add("sq_psn=" + Hex(a.sq_psn, 6));
  if (mask & IBV_QP_TIMEOUT) add("timeout=" + std::to_string(a.timeout));
  if (mask & IBV_QP_RETRY_CNT) add("retry_cnt=" + std::to_string(a.retry_cnt));
  if (mask & IBV_QP_RNR_RETRY) add("rnr_retry=" + std::to_string(a.rnr_retry));
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) add("max_rd_atomic=" + std::to_string(a.max_rd_atomic));
  return s;
}

}  // namespace qpconnect::verbs
