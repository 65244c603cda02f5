// SPDX-License-Identifier: MIT
// mlx5's raw QP context. drivers/infiniband/hw/mlx5/restrack.c answers
// RDMA_NLDEV_CMD_RES_QP_GET_RAW with the firmware's resource dump of segment
// type PRM_QUERY_QP, index1 = the QP number (up to 1 KiB): a sequence of
// segments, each a header (length in dwords, type) and its body. The QP's
// resource segment carries index1 and, as its payload, the output of the
// QUERY_QP command, whose qpc holds the primary address path.
//
// Every position below is a bit offset from the layouts in the Linux kernel's
// include/linux/mlx5/mlx5_ifc.h, counted as MLX5_GET counts them: from the
// most significant bit of the first big-endian dword of the structure.
// No mlx5 device was available to check the decoder against.
#include <cstddef>

#include "qpconnect/observe/raw_qp.h"

namespace qpconnect {
namespace {

struct Field {
  uint32_t bit = 0;   // offset in the structure
  uint32_t bits = 0;  // width
};

// struct mlx5_ifc_resource_dump_segment_header_bits
constexpr Field kSegmentLengthDw{0x00, 0x10};
constexpr Field kSegmentType{0x10, 0x10};
// Segment types 0xfff9..0xffff are the dump's own (notice, command,
// terminate, error, reference, info, menu); others are resource segments.
constexpr uint32_t kFirstOwnSegmentType = 0xfff9;
constexpr uint32_t kTerminateSegmentType = 0xfffb;

// struct mlx5_ifc_resource_dump_resource_segment_bits: header, reserved,
// index1, index2, payload.
constexpr Field kResourceIndex1{0x40, 0x20};
constexpr uint32_t kResourcePayload = 0x80;

// struct mlx5_ifc_query_qp_out_bits: status, syndrome, reserved (ece in
// newer headers), opt_param_mask, ece, then the qpc.
constexpr Field kQueryStatus{0x00, 0x08};
constexpr uint32_t kQueryQpc = 0xc0;

// struct mlx5_ifc_qpc_bits
constexpr Field kQpcRemoteQpn{0xa8, 0x18};
constexpr uint32_t kQpcPrimaryAddressPath = 0xc0;

// struct mlx5_ifc_ads_bits
constexpr Field kAdsGrh{0x28, 0x01};
constexpr Field kAdsRlid{0x30, 0x10};
constexpr uint32_t kAdsRgidRip = 0x80;  // 16 bytes
constexpr uint32_t kAdsRgidRipBits = 0x80;

// The payload bits the decoder reads: up to the end of the primary path's rgid_rip.
constexpr uint32_t kPayloadBitsNeeded =
    kQueryQpc + kQpcPrimaryAddressPath + kAdsRgidRip + kAdsRgidRipBits;

// `f` of the structure starting at bit `base` of `raw` (f.bits <= 32; the
// caller has checked the length).
uint32_t Get(std::span<const uint8_t> raw, uint32_t base, Field f) {
  uint32_t v = 0;
  for (uint32_t i = base + f.bit; i < base + f.bit + f.bits; ++i) {
    v = (v << 1) | ((raw[i / 8] >> (7 - i % 8)) & 1u);
  }
  return v;
}

}  // namespace

std::optional<RawQpDestination> DecodeMlx5QpRaw(std::span<const uint8_t> raw) {
  size_t at = 0;  // byte offset of the current segment
  while (at + 4 <= raw.size()) {
    const uint32_t base = static_cast<uint32_t>(at * 8);
    const uint32_t length = Get(raw, base, kSegmentLengthDw) * 4u;
    const uint32_t type = Get(raw, base, kSegmentType);
    if (length == 0 || at + length > raw.size() || type == kTerminateSegmentType) break;
    if (type < kFirstOwnSegmentType && length * 8u >= kResourcePayload + kPayloadBitsNeeded) {
      const uint32_t payload = base + kResourcePayload;
      if (Get(raw, payload, kQueryStatus) != 0) return std::nullopt;  // the command failed
      const uint32_t qpc = payload + kQueryQpc;
      const uint32_t path = qpc + kQpcPrimaryAddressPath;
      RawQpDestination d;
      d.lqpn = Get(raw, base, kResourceIndex1) & 0xffffffu;
      d.remote_qpn = Get(raw, qpc, kQpcRemoteQpn);
      d.rlid = static_cast<uint16_t>(Get(raw, path, kAdsRlid));
      if (Get(raw, path, kAdsGrh) != 0) {
        Gid gid;
        const size_t first = (path + kAdsRgidRip) / 8;
        for (size_t k = 0; k < gid.size(); ++k) gid[k] = raw[first + k];
        d.rgid = gid;
      }
      return d;
    }
    at += length;
  }
  return std::nullopt;
}

}  // namespace qpconnect
