// SPDX-License-Identifier: MIT
// A port's counters from sysfs (issue 31 item 3), read before and after a
// traffic proof so that a failed one names where the packets stop:
//
//   <root>/<device>/ports/<port>/hw_counters/*   the provider's (rxe: sent_pkts,
//                                                rcvd_pkts, duplicate_request,
//                                                out_of_seq_request,
//                                                completer_retry_err,
//                                                retry_exceeded_err, ...)
//   <root>/<device>/ports/<port>/counters/*      the IB port counters, where
//                                                the device has them (rxe
//                                                has none)
//   <root>/<device>/ports/<port>/state           "4: ACTIVE"
//
// The connector's code reaches it through QpEnv::ReadPortCounters
// (qp_control.h), which unit tests replace; the judging is in core
// (proof_failure.h).
//
// Thread-safety: reads files only.
#pragma once

#include <cstdint>
#include <string>

#include "qpconnect/proof_failure.h"

namespace qpconnect::verbs {

inline constexpr const char* kSysfsInfiniband = "/sys/class/infiniband";

// Never fails: a port without counter files gives PortCounters::unknown
// saying so. Values that do not parse as numbers are left out, and so is
// hw_counters/lifespan (how long the driver caches the values, not a count). hw_counters
// first, then counters/ entries not already named; each in name order.
PortCounters ReadSysfsPortCounters(const std::string& device, uint32_t port,
                                   const std::string& root = kSysfsInfiniband);

}  // namespace qpconnect::verbs
