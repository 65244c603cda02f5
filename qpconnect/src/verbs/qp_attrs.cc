// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/qp_attrs.h"

#include <cstdio>
#include <cstring>

#include "qpconnect/verbs/qp_attr_table.h"
#include "qpconnect/verbs/qp_state_table.h"

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

// QpAttrs's members by the mask bit that carries them (AV aside: `ah`).
#define QPC_QPATTRS_MEMBER(bit, member)                                                \
  {                                                                                    \
    bit, [](const QpAttrs& a) -> uint32_t { return static_cast<uint32_t>(a.member); }, \
        [](QpAttrs& a, uint32_t v) { a.member = static_cast<decltype(a.member)>(v); }  \
  }
struct QpAttrsMember {
  int bit;
  uint32_t (*get)(const QpAttrs& a);
  void (*set)(QpAttrs& a, uint32_t value);
};
constexpr QpAttrsMember kQpAttrsMembers[] = {
    QPC_QPATTRS_MEMBER(IBV_QP_PKEY_INDEX, pkey_index),
    QPC_QPATTRS_MEMBER(IBV_QP_PORT, port_num),
    QPC_QPATTRS_MEMBER(IBV_QP_QKEY, qkey),
    QPC_QPATTRS_MEMBER(IBV_QP_PATH_MTU, path_mtu),
    QPC_QPATTRS_MEMBER(IBV_QP_TIMEOUT, timeout),
    QPC_QPATTRS_MEMBER(IBV_QP_RETRY_CNT, retry_cnt),
    QPC_QPATTRS_MEMBER(IBV_QP_RNR_RETRY, rnr_retry),
    QPC_QPATTRS_MEMBER(IBV_QP_RQ_PSN, rq_psn),
    QPC_QPATTRS_MEMBER(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic),
    QPC_QPATTRS_MEMBER(IBV_QP_MIN_RNR_TIMER, min_rnr_timer),
    QPC_QPATTRS_MEMBER(IBV_QP_SQ_PSN, sq_psn),
    QPC_QPATTRS_MEMBER(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic),
    QPC_QPATTRS_MEMBER(IBV_QP_DEST_QPN, dest_qp_num),
};
#undef QPC_QPATTRS_MEMBER

const QpAttrsMember* MemberOf(int bit) {
  for (const QpAttrsMember& m : kQpAttrsMembers) {
    if (m.bit == bit) return &m;
  }
  return nullptr;
}

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

int QpAttrsMask() {
  int mask = IBV_QP_AV;
  for (const QpAttrsMember& m : kQpAttrsMembers) mask |= m.bit;
  return mask;
}

uint32_t QpAttrsValue(const QpAttrs& a, int bit) {
  const QpAttrsMember* m = MemberOf(bit);
  return m != nullptr ? m->get(a) : 0;
}

void SetQpAttrsValue(QpAttrs& a, int bit, uint32_t value) {
  if (const QpAttrsMember* m = MemberOf(bit)) m->set(a, value);
}

void ToIbvAttr(const QpAttrs& a, int mask, ibv_qp_attr& attr) {
  for (const QpAttrsMember& m : kQpAttrsMembers) {
    if ((mask & m.bit) != 0) FindQpAttr(m.bit)->set(attr, m.get(a));
  }
  if ((mask & IBV_QP_AV) != 0) attr.ah_attr = ToAhAttr(a.ah);
}

void CopyQpAttrs(const QpAttrs& from, int mask, QpAttrs& to) {
  for (const QpAttrsMember& m : kQpAttrsMembers) {
    if ((mask & m.bit) != 0) m.set(to, m.get(from));
  }
  if ((mask & IBV_QP_AV) != 0) to.ah = from.ah;
}

namespace {

// The request `from` -> `to`: the state and exactly the required attributes
// of the state table's (from, to) row, with `a`'s values. Every builder's
// pair has a row (qp_attr_table_test.cc); without one, the state alone,
// which CheckRequest() then refuses as no transition.
ModifyRequest Build(Transport transport, QpState from, QpState to, const QpAttrs& a) {
  ModifyRequest r;
  r.from = from;
  r.to = to;
  const auto rule = FindTransition(transport, from, to);
  r.mask = rule ? rule->required : IBV_QP_STATE;
  r.attr.qp_state = ToIbvState(to);
  ToIbvAttr(a, r.mask, r.attr);
  return r;
}

}  // namespace

ModifyRequest BuildInit(Transport transport, const QpAttrs& a, unsigned access_flags) {
  ModifyRequest r = Build(transport, QpState::kReset, QpState::kInit, a);
  if ((r.mask & IBV_QP_ACCESS_FLAGS) != 0) r.attr.qp_access_flags = access_flags;
  return r;
}

ModifyRequest BuildRtr(Transport transport, const QpAttrs& a) {
  return Build(transport, QpState::kInit, QpState::kRtr, a);
}

ModifyRequest BuildRts(Transport transport, const QpAttrs& a) {
  return Build(transport, QpState::kRtr, QpState::kRts, a);
}

ModifyRequest BuildReset(Transport transport) {
  return Build(transport, QpState::kUnknown, QpState::kReset, QpAttrs{});
}

std::string DecodeMask(int mask) {
  std::string s;
  int rest = 0;
  ForEachMaskBit(mask, [&](int bit, const QpAttrInfo* row) {
    if (row == nullptr) {
      rest |= bit;
      return;
    }
    s += (s.empty() ? "" : "|");
    s += row->mask_name;
  });
  if (mask < 0) rest |= mask & ~0x7fffffff;  // the sign bit, which no attribute uses
  if (rest != 0) s += (s.empty() ? "" : "|") + Hex(static_cast<uint32_t>(rest), 1);
  return s.empty() ? "0" : s;
}

std::string DescribeAttr(const ibv_qp_attr& a, int mask) {
  std::string s;
  for (size_t i = 0; i < kDescribedAttrs; ++i) {
    const QpAttrInfo& row = kQpAttrTable[i];
    if ((mask & row.bit) == 0) continue;
    const uint32_t v = row.value(a);
    std::string text;
    switch (row.format) {
      case AttrFormat::kState:
        text = QpStateName(FromIbvState(static_cast<ibv_qp_state>(v)));
        break;
      case AttrFormat::kDecimal:
        text = std::to_string(v);
        break;
      case AttrFormat::kHex:
        text = Hex(v, row.hex_width);
        break;
      case AttrFormat::kMtu:
        text = std::to_string(MtuBytes(static_cast<Mtu>(v))) + " (enum " + std::to_string(v) + ")";
        break;
      case AttrFormat::kAh:
        text = DescribeAh(a.ah_attr);
        break;
      case AttrFormat::kOther:
        continue;
    }
    s += (s.empty() ? "" : " ") + std::string(row.field) + "=" + text;
  }
  return s;
}

}  // namespace qpconnect::verbs
