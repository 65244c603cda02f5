// SPDX-License-Identifier: MIT
// Describing this side: choosing the port's GID and P_Key and turning the
// device, port and QPs into the EndpointInfo published to the peer. Shared by
// the owning Session and the connector's adopted mode, so both describe the
// same way.
//
// Thread-safety: as the underlying ibv_context.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/device_info.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/gid_select.h"
#include "qpconnect/result.h"

namespace qpconnect::verbs {

// What to describe and how to choose. SessionOptions (verbs/session.h) and
// AdoptOptions (connector.h) embed it: its fields are theirs, and they are
// handed to the description as they are, not copied field by field.
struct DescribeOptions {
  Transport transport = Transport::kRc;
  uint8_t port = 1;
  GidPreference gid;  // RoCE: auto-selected unless given
  uint16_t pkey_index = 0;
  std::optional<uint16_t> pkey_value;  // resolve pkey_index from this value
  uint32_t qkey = 0;                   // UD
  uint8_t sl = 0;
  uint8_t traffic_class = 0;  // GRH traffic class (DSCP << 2 | ECN)
  uint32_t flow_label = 0;    // GRH flow label; REQUIRES: fits 20 bits (kInvalidArgument otherwise)
  // The one path MTU knob: announced as forced (path_mtu_forced), so this
  // side's plan programs it and a negotiating peer's plan follows it
  // (PlanConnection). Unset: the port's active MTU, announced for negotiation.
  std::optional<Mtu> mtu;
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
  std::string host;  // identity for diagnostics; empty: gethostname()
};

// The described side, without QPs, plus what the creator needs to size things.
struct LocalDescription {
  EndpointInfo endpoint;  // qps empty
  DeviceLimits limits;
};

// Queries the device behind `ctx` (kVerbs naming the failed query), then
// DescribeFromDevice() with "configured" meaning the GID's address is set on
// its netdev.
Result<LocalDescription> DescribeLocal(ibv_context& ctx, const DescribeOptions& options);

// The pure half, unit-testable: checks the port is ACTIVE, selects the GID
// (required on Ethernet; on InfiniBand only when one is asked for or found;
// gid_select.h) and the P_Key (by index, or the index holding
// options.pkey_value), and describes. kNotFound naming "ib-port",
// "port_state", "sgid_index" or "pkey_index"; kInvalidArgument for a GID index
// above 255 or a flow label above 20 bits. `configured` may be empty.
Result<LocalDescription> DescribeFromDevice(
    const DeviceInfo& device, const DescribeOptions& options,
    const std::function<bool(const GidEntry&)>& configured = {});

// Appends one QpEntry per QP number: PSNs `first_psn`, +1, ... (masked to 24
// bits), with `mrs[i]` when given. REQUIRES: mrs empty or of qpns' size.
void AddQps(EndpointInfo& endpoint, const std::vector<uint32_t>& qpns, uint32_t first_psn,
            const std::vector<std::optional<MrDescriptor>>& mrs = {});

// A fresh random 24-bit PSN.
uint32_t RandomPsn();

}  // namespace qpconnect::verbs
