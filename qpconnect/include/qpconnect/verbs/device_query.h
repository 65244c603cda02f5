// SPDX-License-Identifier: MIT
// Querying a device, its ports, GID and P_Key tables into the verbs-free
// DeviceInfo/PortInfo values of qpconnect/device_info.h.
//
// GID tables are read with one ibv_query_gid_table() call (valid entries
// only, with their type and netdev), so a 1024-entry RoCE table costs one
// round trip to the kernel; per-index ibv_query_gid_ex() is the fallback for
// kernels without the table call.
//
// Thread-safety: as the underlying ibv_context.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "qpconnect/device_info.h"
#include "qpconnect/result.h"

namespace qpconnect::verbs {

// Everything about the device behind `ctx`: attributes, limits, and every port
// with its GID and P_Key tables. kVerbs (operation names the failing query).
Result<DeviceInfo> QueryDevice(ibv_context& ctx);

// One port, with its valid GID entries and non-zero P_Keys. kVerbs on failure,
// kNotFound for a port the device does not have.
Result<PortInfo> QueryPort(ibv_context& ctx, uint8_t port_num);

// How much of a port's P_Key table a query reads. libibverbs reads each entry
// from sysfs (one file each), so a whole table costs a 64-entry rxe port 64
// file reads (13-30 ms under the lab's emulation) where a description needs
// one entry.
struct PkeyScope {
  // Set: read only the entry at this index (PortInfo::pkeys then holds it,
  // or nothing when it is empty or past the table). Unset: the whole table.
  std::optional<uint16_t> index;
};

// What a description of one port needs and no more (DescribeLocal): the
// device's attributes and limits, and `port_num` alone (DeviceInfo::ports
// has that one port) with its GIDs and the P_Keys `pkeys` asks for.
// kNotFound "device D has no port N (it has M)" for a port the device does
// not have; kVerbs otherwise.
Result<DeviceInfo> QueryDeviceForPort(ibv_context& ctx, uint8_t port_num, PkeyScope pkeys);

// Valid GID entries of `port_num`, in index order.
Result<std::vector<GidEntry>> QueryGids(ibv_context& ctx, uint8_t port_num, uint32_t gid_tbl_len);

// Entry `index` of `port_num`'s GID table (one ibv_query_gid_ex): nullopt
// when the entry is empty. kVerbs naming port and index otherwise.
Result<std::optional<GidEntry>> QueryGidAt(ibv_context& ctx, uint8_t port_num, uint16_t index);

// Conversions from libibverbs enumerations (exposed for tests).
const char* PortStateName(int state);
const char* PhysStateName(int phys_state);
LinkLayer ToLinkLayer(uint8_t link_layer);
GidType ToGidType(uint32_t gid_type);
Mtu ToMtu(int ibv_mtu);
std::string ActiveSpeedName(uint8_t active_speed);
uint8_t ActiveWidthLanes(uint8_t active_width);

}  // namespace qpconnect::verbs
