// SPDX-License-Identifier: MIT
// The RDMA devices of the process, opened once on first use and kept for the
// process's life, as librdmacm keeps them: every id on a device shares its
// ibv_context (programs compare id->verbs across ids), and its default PD
// (rdma_create_qp with a NULL pd).
//
// Thread-safety: REQUIRE library_mutex held (lock.h).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/result.h"
#include "qpconnect/verbs/describe.h"
#include "qpconnect/verbs/device.h"
#include "qpconnect/verbs/resources.h"
#include "state.h"

namespace qpconnect::rdmacm {

struct Device {
  std::string name;
  verbs::UniqueContext context;  // opened by verbs::OpenEveryDevice
  ibv_context* ctx = nullptr;    // context.get(), as the ids hand it out
  verbs::UniquePd default_pd;    // made on first need (DefaultPd)
  uint8_t ports = 0;
  ibv_device_attr attr{};  // queried once: rd_atomic limits checked per connection
  // Descriptions of a port with one GID (or the automatic choice, key -1),
  // made once: describing reads the port and its GID table.
  std::map<std::pair<uint8_t, int>, verbs::LocalDescription> described;
};

// Every device libibverbs sees, opened (kNotFound when there is none; the
// error says why, e.g. the kernel has no RDMA support).
Result<std::vector<Device*>*> Devices() QPCM_REQUIRES(library_mutex);
Device* DeviceByContext(ibv_context* ctx) QPCM_REQUIRES(library_mutex);
// The default PD of `device`.
Result<ibv_pd*> DefaultPd(Device& device) QPCM_REQUIRES(library_mutex);
// This side's description on `port` with GID `gid_index` (nullopt: chosen
// automatically), without QPs.
Result<const verbs::LocalDescription*> Describe(Device& device, uint8_t port,
                                                std::optional<uint16_t> gid_index)
    QPCM_REQUIRES(library_mutex);

}  // namespace qpconnect::rdmacm
