// SPDX-License-Identifier: MIT
// The ibv_modify_qp attributes as data: for each IBV_QP_* mask bit, its name,
// the ibv_qp_attr field it carries (also the key qp-trace records it under),
// the field's valid range and how it is rendered. With the state table
// (verbs/qp_state_table.h: required and optional masks per transport and
// state pair) it follows the shape of the kernel's qp_state_table
// (drivers/infiniband/core/verbs.c). Everything that knows which attribute a
// mask bit carries reads it from here: the request check and its refusal
// messages (transition.h: CheckRequest), DecodeMask and DescribeAttr
// (qp_attrs.h), qp-trace's preload (what it records of a call) and the trace
// reader and judge (what they read back).
//
// The fake QP of the unit tests (tests/fakes/fake_qp.h) keeps its own,
// independently written table, so the tests cross-check this one.
//
// Self-contained (libibverbs' header only, everything constexpr), so that the
// preload library, which links no C++ runtime, can use it too.
//
// Thread-safety: constant data.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

namespace qpconnect::verbs {

// How an attribute's value is rendered (DescribeAttr) and recorded (preload).
enum class AttrFormat : uint8_t {
  kState,    // a QP state: "RTR"
  kDecimal,  // 7
  kHex,      // 0x000123 (hex_width digits)
  kMtu,      // the enum and its bytes: "1024 (enum 3)"
  kAh,       // an address vector {dlid=... port_num=... dgid=...}
  kOther,    // a structure DescribeAttr does not render (ALT_PATH, CAP)
};

// One attribute ibv_modify_qp can carry.
struct QpAttrInfo {
  int bit;                // IBV_QP_*
  const char* mask_name;  // DecodeMask's name: "PATH_MTU"
  const char* field;      // ibv_qp_attr's member and the trace's key: "path_mtu"
  AttrFormat format;
  int hex_width;  // kHex: digits shown
  // The valid range of value(attr), inclusive: CheckRequest refuses a request
  // outside it before it reaches the device. A range of the whole field type
  // is no constraint.
  uint32_t min;
  uint32_t max;
  // CheckRequest's words for a value below min ("port_num 0 is not a port");
  // nullptr when min is 0. Above max it says "<field> exceeds 24 bits" for the
  // 24-bit fields and "<field> above <max>" for the others; kMtu has its own.
  const char* below_min;
  // The largest value the ibv_qp_attr field holds (its type's range): what a
  // reader of recorded values accepts before the range above is judged.
  uint32_t field_max;
  // The value checked and rendered (kAh: ah_attr.port_num; kOther: 0), and
  // its setter (kAh, kOther: sets nothing).
  uint32_t (*value)(const ibv_qp_attr& attr);
  void (*set)(ibv_qp_attr& attr, uint32_t value);
};

inline constexpr uint32_t kAttr24Bits = 0xffffff;
inline constexpr uint32_t kAttrU8 = 0xff;
inline constexpr uint32_t kAttrU16 = 0xffff;
inline constexpr uint32_t kAttrU32 = 0xffffffff;

// The getter and setter of an ibv_qp_attr member, and its type's largest
// value (enums: 32 bits).
#define QPC_ATTR_ACCESS(member)                                                     \
  [](const ibv_qp_attr& a) -> uint32_t { return static_cast<uint32_t>(a.member); }, \
      [](ibv_qp_attr& a, uint32_t v) { a.member = static_cast<decltype(a.member)>(v); }
#define QPC_ATTR_FIELD_MAX(member)               \
  (sizeof(ibv_qp_attr::member) == 1   ? kAttrU8  \
   : sizeof(ibv_qp_attr::member) == 2 ? kAttrU16 \
                                      : kAttrU32)
#define QPC_ATTR_NO_VALUE [](const ibv_qp_attr&) -> uint32_t { return 0; }
#define QPC_ATTR_NO_SET [](ibv_qp_attr&, uint32_t) {}

// Every attribute of enum ibv_qp_attr_mask, in the order DescribeAttr lists
// them. Ranges: ibv_modify_qp(3) and IBA vol. 1 ch. 9 and 11 (PSN and QPN 24
// bits; retry counts 3 bits; ACK timeout and RNR timer 5 bits; path MTU enum
// 1..5; a port number is never 0).
inline constexpr QpAttrInfo kQpAttrTable[] = {
    {IBV_QP_STATE, "STATE", "qp_state", AttrFormat::kState, 0, IBV_QPS_RESET, IBV_QPS_UNKNOWN,
     nullptr, QPC_ATTR_FIELD_MAX(qp_state), QPC_ATTR_ACCESS(qp_state)},
    {IBV_QP_PKEY_INDEX, "PKEY_INDEX", "pkey_index", AttrFormat::kDecimal, 0, 0, kAttrU16, nullptr,
     QPC_ATTR_FIELD_MAX(pkey_index), QPC_ATTR_ACCESS(pkey_index)},
    {IBV_QP_PORT, "PORT", "port_num", AttrFormat::kDecimal, 0, 1, kAttrU8,
     "port_num 0 is not a port", QPC_ATTR_FIELD_MAX(port_num), QPC_ATTR_ACCESS(port_num)},
    {IBV_QP_ACCESS_FLAGS, "ACCESS_FLAGS", "qp_access_flags", AttrFormat::kHex, 1, 0, kAttrU32,
     nullptr, QPC_ATTR_FIELD_MAX(qp_access_flags), QPC_ATTR_ACCESS(qp_access_flags)},
    {IBV_QP_QKEY, "QKEY", "qkey", AttrFormat::kHex, 8, 0, kAttrU32, nullptr,
     QPC_ATTR_FIELD_MAX(qkey), QPC_ATTR_ACCESS(qkey)},
    {IBV_QP_PATH_MTU, "PATH_MTU", "path_mtu", AttrFormat::kMtu, 0, IBV_MTU_256, IBV_MTU_4096,
     nullptr, QPC_ATTR_FIELD_MAX(path_mtu), QPC_ATTR_ACCESS(path_mtu)},
    {IBV_QP_DEST_QPN, "DEST_QPN", "dest_qp_num", AttrFormat::kHex, 6, 0, kAttr24Bits, nullptr,
     QPC_ATTR_FIELD_MAX(dest_qp_num), QPC_ATTR_ACCESS(dest_qp_num)},
    {IBV_QP_RQ_PSN, "RQ_PSN", "rq_psn", AttrFormat::kHex, 6, 0, kAttr24Bits, nullptr,
     QPC_ATTR_FIELD_MAX(rq_psn), QPC_ATTR_ACCESS(rq_psn)},
    {IBV_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC", "max_dest_rd_atomic", AttrFormat::kDecimal, 0,
     0, kAttrU8, nullptr, QPC_ATTR_FIELD_MAX(max_dest_rd_atomic),
     QPC_ATTR_ACCESS(max_dest_rd_atomic)},
    {IBV_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER", "min_rnr_timer", AttrFormat::kDecimal, 0, 0, 31,
     nullptr, QPC_ATTR_FIELD_MAX(min_rnr_timer), QPC_ATTR_ACCESS(min_rnr_timer)},
    {IBV_QP_AV, "AV", "ah_attr", AttrFormat::kAh, 0, 1, kAttrU8, "ah_attr.port_num 0", kAttrU8,
     [](const ibv_qp_attr& a) -> uint32_t { return a.ah_attr.port_num; }, QPC_ATTR_NO_SET},
    {IBV_QP_SQ_PSN, "SQ_PSN", "sq_psn", AttrFormat::kHex, 6, 0, kAttr24Bits, nullptr,
     QPC_ATTR_FIELD_MAX(sq_psn), QPC_ATTR_ACCESS(sq_psn)},
    {IBV_QP_TIMEOUT, "TIMEOUT", "timeout", AttrFormat::kDecimal, 0, 0, 31, nullptr,
     QPC_ATTR_FIELD_MAX(timeout), QPC_ATTR_ACCESS(timeout)},
    {IBV_QP_RETRY_CNT, "RETRY_CNT", "retry_cnt", AttrFormat::kDecimal, 0, 0, 7, nullptr,
     QPC_ATTR_FIELD_MAX(retry_cnt), QPC_ATTR_ACCESS(retry_cnt)},
    {IBV_QP_RNR_RETRY, "RNR_RETRY", "rnr_retry", AttrFormat::kDecimal, 0, 0, 7, nullptr,
     QPC_ATTR_FIELD_MAX(rnr_retry), QPC_ATTR_ACCESS(rnr_retry)},
    {IBV_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC", "max_rd_atomic", AttrFormat::kDecimal, 0, 0,
     kAttrU8, nullptr, QPC_ATTR_FIELD_MAX(max_rd_atomic), QPC_ATTR_ACCESS(max_rd_atomic)},
    // Not rendered by DescribeAttr (the connector never sends them), but
    // decoded, checked against the state table and recorded by the preload.
    {IBV_QP_CUR_STATE, "CUR_STATE", "cur_qp_state", AttrFormat::kState, 0, IBV_QPS_RESET,
     IBV_QPS_UNKNOWN, nullptr, QPC_ATTR_FIELD_MAX(cur_qp_state), QPC_ATTR_ACCESS(cur_qp_state)},
    {IBV_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY", "en_sqd_async_notify", AttrFormat::kDecimal,
     0, 0, kAttrU8, nullptr, QPC_ATTR_FIELD_MAX(en_sqd_async_notify),
     QPC_ATTR_ACCESS(en_sqd_async_notify)},
    {IBV_QP_ALT_PATH, "ALT_PATH", "alt_ah_attr", AttrFormat::kOther, 0, 0, kAttrU32, nullptr,
     kAttrU32, QPC_ATTR_NO_VALUE, QPC_ATTR_NO_SET},
    {IBV_QP_PATH_MIG_STATE, "PATH_MIG_STATE", "path_mig_state", AttrFormat::kDecimal, 0,
     IBV_MIG_MIGRATED, IBV_MIG_ARMED, nullptr, QPC_ATTR_FIELD_MAX(path_mig_state),
     QPC_ATTR_ACCESS(path_mig_state)},
    {IBV_QP_CAP, "CAP", "cap", AttrFormat::kOther, 0, 0, kAttrU32, nullptr, kAttrU32,
     QPC_ATTR_NO_VALUE, QPC_ATTR_NO_SET},
    {IBV_QP_RATE_LIMIT, "RATE_LIMIT", "rate_limit", AttrFormat::kDecimal, 0, 0, kAttrU32, nullptr,
     QPC_ATTR_FIELD_MAX(rate_limit), QPC_ATTR_ACCESS(rate_limit)},
};

#undef QPC_ATTR_ACCESS
#undef QPC_ATTR_FIELD_MAX
#undef QPC_ATTR_NO_VALUE
#undef QPC_ATTR_NO_SET

// DescribeAttr renders the first kDescribedAttrs rows, in table order.
inline constexpr size_t kDescribedAttrs = 16;

// The row of `bit` (one IBV_QP_* bit); nullptr if the table has none.
constexpr const QpAttrInfo* FindQpAttr(int bit) {
  for (const QpAttrInfo& row : kQpAttrTable) {
    if (row.bit == bit) return &row;
  }
  return nullptr;
}

// The row whose field is `field` ("path_mtu"); nullptr if none.
constexpr const QpAttrInfo* FindQpAttrByField(const char* field) {
  for (const QpAttrInfo& row : kQpAttrTable) {
    size_t i = 0;
    while (row.field[i] != '\0' && row.field[i] == field[i]) ++i;
    if (row.field[i] == field[i]) return &row;
  }
  return nullptr;
}

// The bits of `mask` in ascending order, each once, calling `fn(bit, row)`
// (row nullptr for a bit the table lacks): the order DecodeMask names them
// and the preload records them.
template <typename Fn>
constexpr void ForEachMaskBit(int mask, Fn&& fn) {
  for (int i = 0; i < 31; ++i) {
    const int bit = 1 << i;
    if ((mask & bit) != 0) fn(bit, FindQpAttr(bit));
  }
}

}  // namespace qpconnect::verbs
