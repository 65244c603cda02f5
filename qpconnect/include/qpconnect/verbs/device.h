// SPDX-License-Identifier: MIT
// Finding and opening RDMA devices; RAII owners for the device list and context.
//
// Thread-safety: the functions are thread-safe; a Context is used by one
// thread at a time unless the caller synchronizes.
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qpconnect/result.h"

namespace qpconnect::verbs {

struct ContextDeleter {
  void operator()(ibv_context* ctx) const noexcept;
};
using UniqueContext = std::unique_ptr<ibv_context, ContextDeleter>;

// Names of the RDMA devices libibverbs sees, in its order. An empty list is
// not an error. kNotFound (errno kept) if libibverbs cannot enumerate (e.g.
// the kernel has no RDMA support: ENOSYS).
Result<std::vector<std::string>> ListDevices();

// Opens the device called `name`, or the first device when `name` is empty.
// kNotFound when there is no device at all, or none of that name (the detail
// lists the devices there are); kVerbs when ibv_open_device fails.
Result<UniqueContext> OpenDevice(std::string_view name);

// One opened device of OpenEveryDevice().
struct OpenedDevice {
  std::string name;
  UniqueContext context;
};

// Every device libibverbs lists, opened, from one enumeration; a device that
// fails to open is left out and named in `skipped` ("rxe2: ibv_open_device:
// ..."). kNotFound when libibverbs cannot enumerate, or no device opened
// (the detail says how many were listed).
Result<std::vector<OpenedDevice>> OpenEveryDevice(std::vector<std::string>* skipped = nullptr);

// Hands `list` (an ibv_get_device_list() result of `count` devices, taken
// moments before: WarmDeviceList()) to the process's first OpenDevice(),
// which then finds its device there instead of having libibverbs enumerate
// the devices again (a netlink round trip per device; about 1 ms in the
// lab), and frees it. A list handed after that first OpenDevice() began
// (too late for it) is freed at once, so no later open can see an old list.
// Thread-safe.
void HandDeviceListToOpen(ibv_device** list, int count);

}  // namespace qpconnect::verbs
