// SPDX-License-Identifier: MIT
// The owning Session's sizes, checked against the device before anything is
// created: the per-QP buffer layout, the CQ depths, and every limit they must
// respect (max_qp, max_qp_wr, max_cqe, max_mr_size), in 64-bit arithmetic.
// Nothing is clamped silently: a request the device cannot meet is refused
// with the limit named.
//
// Buffer layout, per QP i, at i * slot_bytes (64-byte aligned):
//   [send: message_size][recv slots: rx_depth x (message_size + GRH on UD)]
//   [RDMA target: message_size][RDMA source: message_size][read back: message_size]
// With shared buffers every QP's areas are those of QP 0 (one slot in all):
// for traffic with one message in flight at a time across all the QPs, as
// verbs/traffic.h runs it, memory does not grow with the QP count. The CQs
// are then sized for what such traffic can have outstanding, not for every
// receive posted (see SessionSizes::shared).
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qpconnect/device_info.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"

namespace qpconnect::verbs {

// Send WRs per QP: the traffic proof has one outstanding at a time; 2 leaves
// slack and keeps 10,000 QPs within a 32K-entry send CQ (rxe max_cqe).
inline constexpr uint32_t kSendDepth = 2;

struct SessionSizes {
  Transport transport = Transport::kRc;
  uint32_t num_qps = 1;
  uint32_t message_size = 4096;
  uint32_t rx_depth = 8;
  // One slot shared by every QP, and CQs of at most kSharedCqCap + 1 entries
  // (or what every WR needs, if less).
  bool shared = false;
};

// CQ entries a shared-buffer session asks for at most (plus one): its traffic
// has one message in flight at a time, and this leaves room for the flushed
// receives of many QPs that fail at once, while create stays cheap.
inline constexpr uint64_t kSharedCqCap = 4096;

struct SessionLayout {
  uint32_t message_size = 0;
  uint32_t rx_depth = 0;
  uint32_t recv_slot_bytes = 0;  // message_size, + 40 (GRH) on UD
  size_t slot_bytes = 0;         // one QP's share, 64-byte aligned
  size_t stride = 0;             // from one QP's slot to the next: slot_bytes, 0 if shared
  size_t buffer_bytes = 0;       // all QPs (one slot if shared), page aligned
  int send_cqe = 0;              // num_qps * kSendDepth + 1 (shared: capped)
  int recv_cqe = 0;              // num_qps * rx_depth + 1 (shared: capped)

  size_t Send(size_t qp) const { return qp * stride; }
  size_t Recv(size_t qp, uint32_t slot) const {
    return Send(qp) + message_size + size_t{slot} * recv_slot_bytes;
  }
  size_t RdmaTarget(size_t qp) const { return Recv(qp, rx_depth); }
  size_t RdmaSource(size_t qp) const { return RdmaTarget(qp) + message_size; }
  size_t ReadBack(size_t qp) const { return RdmaSource(qp) + message_size; }
};

// The layout of `sizes` on a device with `limits` (a limit of 0 is unknown and
// not checked). kInvalidArgument naming the option ("qps", "rx-depth",
// "size") and the device limit it exceeds: num_qps > max_qp, rx_depth or the
// send depth > max_qp_wr, a CQ deeper than max_cqe, a buffer larger than
// max_mr_size or than this process can address.
// REQUIRES: num_qps, message_size and rx_depth are at least 1.
Result<SessionLayout> PlanSessionLayout(const SessionSizes& sizes, const DeviceLimits& limits);

}  // namespace qpconnect::verbs
