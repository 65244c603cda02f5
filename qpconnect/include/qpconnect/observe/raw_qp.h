// SPDX-License-Identifier: MIT
// Drivers' raw QP contexts as QP destinations. `rdma res show qp -r` asks
// the kernel for RDMA_NLDEV_CMD_RES_QP_GET_RAW (CAP_NET_ADMIN): one
// RDMA_NLDEV_ATTR_RES_RAW blob per QP, formatted by the driver (its
// fill_res_qp_entry_raw). Where the driver's layout is public, the blob holds
// what the tracker's plain attributes lack: the remote GID and LID the QP
// sends to. Each driver that can be decoded has an entry in a table (driver
// name -> decoder); other drivers join by adding theirs.
//
//   mlx5_core  drivers/infiniband/hw/mlx5/restrack.c dumps the firmware's
//              resource dump of segment PRM_QUERY_QP for the QP; decoded per
//              include/linux/mlx5/mlx5_ifc.h (raw_qp_mlx5.cc). No mlx5
//              device was available to check it against; a decoded remote
//              QP number that contradicts the tracker's rqpn is refused.
//
// Thread-safety: constant data and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "qpconnect/endpoint.h"
#include "qpconnect/observe/snapshot.h"

namespace qpconnect {

// What a raw context says about where its QP sends.
struct RawQpDestination {
  uint32_t lqpn = 0;        // the QP the context belongs to
  uint32_t remote_qpn = 0;  // its dest_qp_num (0 before RTR)
  std::optional<Gid> rgid;  // the remote GID, when the primary path has a GRH
  uint16_t rlid = 0;        // the remote LID (InfiniBand); 0 when none
};

// Decodes one RDMA_NLDEV_ATTR_RES_RAW blob; nullopt when it is not in the
// layout the decoder knows (too short, a failed command, no QP context).
using RawQpDecoder = std::optional<RawQpDestination> (*)(std::span<const uint8_t> raw);

struct RawQpDriver {
  std::string_view driver;  // the kernel driver (sysfs DEV/device/driver): "mlx5_core"
  RawQpDecoder decode;
  std::string_view layout;  // where the layout is from, for notes and docs
};

// Every driver whose raw QP context is decoded.
std::span<const RawQpDriver> RawQpDrivers();
// The entry of `driver`; nullptr when its contexts are not decoded.
const RawQpDriver* FindRawQpDriver(std::string_view driver);

// mlx5's raw QP context (raw_qp_mlx5.cc).
std::optional<RawQpDestination> DecodeMlx5QpRaw(std::span<const uint8_t> raw);

// Sets q's dgid (a non-zero rgid) and dlid (a non-zero rlid) from `d`, which
// must be q's context (same lqpn). Returns false and changes nothing when
// the decoded remote QP number contradicts the tracker's (q.rqpn set, not 0,
// and different): then the layout is not what the decoder assumes.
bool ApplyRawDestination(const RawQpDestination& d, KernelQp* q);

}  // namespace qpconnect
