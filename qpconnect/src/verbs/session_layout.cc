// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/session_layout.h"

#include <algorithm>
#include <limits>
#include <string>

namespace qpconnect::verbs {
namespace {

constexpr uint64_t kAlign = 4096;
constexpr uint32_t kUdGrh = 40;

Error TooLarge(std::string option, std::string detail) {
  return Error{ErrorCode::kInvalidArgument, 0, "size session", std::move(option),
               std::move(detail)};
}

}  // namespace

Result<SessionLayout> PlanSessionLayout(const SessionSizes& s, const DeviceLimits& limits) {
  const uint64_t n = s.num_qps;
  if (limits.max_qp != 0 && n > limits.max_qp) {
    return TooLarge("qps", std::to_string(n) + " QPs exceed the device's max_qp " +
                               std::to_string(limits.max_qp));
  }
  if (limits.max_qp_wr != 0 && s.rx_depth > limits.max_qp_wr) {
    return TooLarge("rx-depth", "rx depth " + std::to_string(s.rx_depth) +
                                    " exceeds the device's max_qp_wr " +
                                    std::to_string(limits.max_qp_wr));
  }
  if (limits.max_qp_wr != 0 && kSendDepth > limits.max_qp_wr) {
    return TooLarge("qps", "the device's max_qp_wr " + std::to_string(limits.max_qp_wr) +
                               " is below the " + std::to_string(kSendDepth) +
                               " send WRs each QP needs");
  }
  // CQ depths, in 64 bits: N x rx_depth can exceed 2^31 long before max_cqe.
  uint64_t recv_cqe = n * s.rx_depth + 1;
  uint64_t send_cqe = n * kSendDepth + 1;
  if (s.shared) {
    recv_cqe = std::min(recv_cqe, std::max<uint64_t>(kSharedCqCap, s.rx_depth) + 1);
    send_cqe = std::min(send_cqe, kSharedCqCap + 1);
  }
  const uint64_t cqe_cap =
      limits.max_cqe != 0 ? limits.max_cqe : uint64_t{std::numeric_limits<int>::max()};
  if (recv_cqe > cqe_cap) {
    return TooLarge("rx-depth", "the receive CQ needs " + std::to_string(recv_cqe) +
                                    " entries (--qps " + std::to_string(n) + " x --rx-depth " +
                                    std::to_string(s.rx_depth) +
                                    " + 1), above the device's max_cqe " + std::to_string(cqe_cap) +
                                    ": use fewer QPs or a smaller depth");
  }
  if (send_cqe > cqe_cap) {
    return TooLarge("qps", "the send CQ needs " + std::to_string(send_cqe) + " entries (--qps " +
                               std::to_string(n) + " x " + std::to_string(kSendDepth) +
                               " + 1), above the device's max_cqe " + std::to_string(cqe_cap));
  }
  // The buffer, in 64 bits: message_size x (4 + rx_depth) per QP can overflow 32.
  const uint64_t recv_slot =
      uint64_t{s.message_size} + (s.transport == Transport::kUd ? kUdGrh : 0);
  const uint64_t per_qp = uint64_t{s.message_size} * 4 + uint64_t{s.rx_depth} * recv_slot;
  const uint64_t slot = (per_qp + 63) / 64 * 64;
  const uint64_t max_bytes = uint64_t{std::numeric_limits<size_t>::max()} / 2;
  const uint64_t slots = s.shared ? 1 : n;
  if (slot != 0 && slots > max_bytes / slot) {
    return TooLarge("size",
                    "the buffers would need more than " + std::to_string(max_bytes) + " bytes");
  }
  const uint64_t total = (slot * slots + kAlign - 1) / kAlign * kAlign;
  if (limits.max_mr_size != 0 && total > limits.max_mr_size) {
    return TooLarge("size", "the buffers need " + std::to_string(total) +
                                " bytes in one memory region, above the device's max_mr_size " +
                                std::to_string(limits.max_mr_size) +
                                ": use fewer QPs, a smaller --size or --rx-depth");
  }
  SessionLayout l;
  l.message_size = s.message_size;
  l.rx_depth = s.rx_depth;
  l.recv_slot_bytes = static_cast<uint32_t>(recv_slot);
  l.slot_bytes = static_cast<size_t>(slot);
  l.stride = s.shared ? 0 : l.slot_bytes;
  l.buffer_bytes = static_cast<size_t>(total);
  l.send_cqe = static_cast<int>(send_cqe);
  l.recv_cqe = static_cast<int>(recv_cqe);
  return l;
}

}  // namespace qpconnect::verbs
