// SPDX-License-Identifier: MIT
// qp-info's output: DeviceInfo values as a human table or as JSON. Pure, so
// the format is unit-tested without hardware.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "qpconnect/device_info.h"

namespace qpconnect::tools {

// The human table for `devices` (one block per device, one per port).
std::string FormatDevicesText(const std::vector<DeviceInfo>& devices);

// {"devices": [...]} with the fields documented in docs/qp-info.md.
nlohmann::ordered_json DevicesToJson(const std::vector<DeviceInfo>& devices);

}  // namespace qpconnect::tools
