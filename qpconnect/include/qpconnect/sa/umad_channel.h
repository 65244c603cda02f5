// SPDX-License-Identifier: MIT
// The MadChannel over libibumad: a umad port (/dev/infiniband/umadN, or
// ibsim's simulated one under LD_PRELOAD=libumad2sim.so) with a registered
// SubnAdm agent. Needs no verbs device.
//
// Thread-safety: one thread per UmadChannel.
#pragma once

#include <memory>
#include <string>

#include "qpconnect/result.h"
#include "qpconnect/sa/path_resolver.h"

namespace qpconnect::sa {

// Reads the port's facts with umad_get_port. `ca_name` empty: the default CA;
// `port_num` 0: its first active port. kNotFound naming the CA/port if it does
// not exist (or no umad device exists at all).
Result<SaPort> QueryUmadPort(const std::string& ca_name, uint8_t port_num);

// Opens the port and registers a SubnAdm (class 3, version 2) agent with
// RMPP, addressed to `port.sm_lid` on QP1 with `port.sm_sl`. The channel owns
// the file descriptor and agent and releases both. kIo naming the umad call
// that failed.
Result<std::unique_ptr<MadChannel>> OpenUmadChannel(const SaPort& port);

}  // namespace qpconnect::sa
