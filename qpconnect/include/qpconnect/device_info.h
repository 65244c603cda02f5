// SPDX-License-Identifier: MIT
// What qp-info reports about an RDMA device: verbs-free value types filled by
// the verbs layer (verbs/device_query.h) and printed by tools, so formatting
// and selection logic are testable without hardware.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qpconnect/endpoint.h"

namespace qpconnect {

// Device limits that matter when connecting QPs.
struct DeviceLimits {
  uint32_t max_qp = 0;
  uint32_t max_qp_wr = 0;
  uint32_t max_sge = 0;
  uint32_t max_cq = 0;
  uint32_t max_cqe = 0;
  uint32_t max_mr = 0;
  uint64_t max_mr_size = 0;
  uint32_t max_pd = 0;
  uint32_t max_ah = 0;
  uint32_t max_qp_rd_atom = 0;       // reads/atomics a QP accepts as responder
  uint32_t max_qp_init_rd_atom = 0;  // reads/atomics a QP may have outstanding as initiator
  uint32_t max_res_rd_atom = 0;
  uint32_t max_srq = 0;
  uint32_t max_pkeys = 0;
  std::string atomic_cap;  // "none", "hca", "global"

  friend bool operator==(const DeviceLimits&, const DeviceLimits&) = default;
};

// One P_Key table entry (only non-zero entries are listed).
struct PkeyEntry {
  uint16_t index = 0;
  uint16_t pkey = 0;  // incl. membership bit (0x8000 = full member)

  bool full_member() const { return (pkey & kPkeyFullMember) != 0; }
  friend bool operator==(const PkeyEntry&, const PkeyEntry&) = default;
};

struct PortInfo {
  PortFacts facts;         // port number, link layer, LID/LMC/SM LID, MTUs, ...
  std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED", ...
  std::string phys_state;  // "LINK_UP", "POLLING", "DISABLED", ...
  uint8_t sm_sl = 0;
  uint32_t max_msg_sz = 0;
  uint32_t gid_tbl_len = 0;  // capacity of the GID table
  uint16_t pkey_tbl_len = 0;
  std::string active_speed;  // "25 Gb/s", may be empty
  uint8_t active_width = 0;  // lanes (1, 4, 8, 12); 0 unknown
  // The port's network device, as `rdma link` shows it (RoCE: the Ethernet
  // device its GIDs belong to); empty when none (InfiniBand without IPoIB
  // GIDs).
  std::string netdev;
  std::vector<GidEntry> gids;  // valid entries only
  std::vector<PkeyEntry> pkeys;

  friend bool operator==(const PortInfo&, const PortInfo&) = default;
};

struct DeviceInfo {
  std::string name;        // "mlx5_0", "rxe0"
  std::string node_type;   // "ca", "rnic", "switch", ...
  std::string transport;   // "infiniband", "iwarp", ...
  uint64_t node_guid = 0;  // host byte order
  uint64_t sys_image_guid = 0;
  std::string fw_ver;
  uint32_t vendor_id = 0;
  uint32_t vendor_part_id = 0;
  uint32_t hw_ver = 0;
  DeviceLimits limits;
  std::vector<PortInfo> ports;

  friend bool operator==(const DeviceInfo&, const DeviceInfo&) = default;
};

// "0002:c903:0001:0203": a GUID in the form ibv_devinfo prints.
std::string GuidToString(uint64_t guid);

}  // namespace qpconnect
