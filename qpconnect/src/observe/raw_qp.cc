// SPDX-License-Identifier: MIT
#include "qpconnect/observe/raw_qp.h"

namespace qpconnect {
namespace {

// The drivers whose raw QP contexts are decoded: add a row to add a driver.
constexpr RawQpDriver kDrivers[] = {
    {"mlx5_core", DecodeMlx5QpRaw,
     "resource dump segment PRM_QUERY_QP (drivers/infiniband/hw/mlx5/restrack.c) holding the "
     "QUERY_QP output, include/linux/mlx5/mlx5_ifc.h"},
};

}  // namespace

std::span<const RawQpDriver> RawQpDrivers() { return kDrivers; }

const RawQpDriver* FindRawQpDriver(std::string_view driver) {
  for (const RawQpDriver& d : kDrivers) {
    if (d.driver == driver) return &d;
  }
  return nullptr;
}

bool ApplyRawDestination(const RawQpDestination& d, KernelQp* q) {
  if (d.lqpn != q->lqpn) return false;
  if (q->rqpn && *q->rqpn != 0 && d.remote_qpn != *q->rqpn) return false;
  if (d.rgid && !IsZeroGid(*d.rgid)) q->dgid = d.rgid;
  if (d.rlid != 0) q->dlid = d.rlid;
  return true;
}

}  // namespace qpconnect
