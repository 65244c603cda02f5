// SPDX-License-Identifier: MIT
#include "qpconnect/verbs/device.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "qpconnect/verbs/verbs_error.h"

namespace qpconnect::verbs {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};
using UniqueDeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;

Result<UniqueDeviceList> GetDeviceList(int& count) {
  errno = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    // ENOSYS: the kernel has no RDMA support at all; no device either way.
    return ErrnoError(ErrorCode::kNotFound, errno, "ibv_get_device_list",
                      "cannot enumerate RDMA devices");
  }
  return UniqueDeviceList(list);
}

// The list HandDeviceListToOpen() keeps for the first OpenDevice().
struct HandedList {
  std::mutex mutex;
  ibv_device** list = nullptr;
  int count = 0;
  bool first_open_began = false;
};

HandedList& Handed() {
  static HandedList* h = new HandedList;  // never destroyed: no exit-order race
  return *h;
}

// The handed list, if the first OpenDevice() is the caller and one is there.
UniqueDeviceList TakeHandedList(int& count) {
  HandedList& h = Handed();
  std::lock_guard lock(h.mutex);
  h.first_open_began = true;
  count = h.count;
  return UniqueDeviceList(std::exchange(h.list, nullptr));
}

std::string Join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

void ContextDeleter::operator()(ibv_context* ctx) const noexcept {
  if (int rc = ibv_close_device(ctx); rc != 0) LogDestroyFailure("ibv_close_device", rc);
}

Result<std::vector<std::string>> ListDevices() {
  int count = 0;
  auto list = GetDeviceList(count);
  if (!list) return std::move(list).error();
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.emplace_back(ibv_get_device_name(list->get()[i]));
  return names;
}

void HandDeviceListToOpen(ibv_device** list, int count) {
  if (list == nullptr) return;
  HandedList& h = Handed();
  std::lock_guard lock(h.mutex);
  if (h.first_open_began) {
    ibv_free_device_list(list);
    return;
  }
  if (h.list != nullptr) ibv_free_device_list(h.list);
  h.list = list;
  h.count = count;
}

Result<UniqueContext> OpenDevice(std::string_view name) {
  int count = 0;
  Result<UniqueDeviceList> list = TakeHandedList(count);
  if (*list == nullptr) list = GetDeviceList(count);
  if (!list) return std::move(list).error();
  std::vector<std::string> names;
  ibv_device* chosen = nullptr;
  for (int i = 0; i < count; ++i) {
    ibv_device* dev = list->get()[i];
    names.emplace_back(ibv_get_device_name(dev));
    if (chosen == nullptr && (name.empty() || names.back() == name)) chosen = dev;
  }
  if (count == 0) {
    return Error{
        ErrorCode::kNotFound, 0, "find RDMA device", "",
        "no RDMA device found (is a driver loaded? `rdma link` / `ibv_devices` list none)"};
  }
  if (chosen == nullptr) {
    return Error{ErrorCode::kNotFound, 0, "find RDMA device", "ib-dev",
                 "no device named '" + std::string(name) + "'; devices: " + Join(names)};
  }
  errno = 0;
  ibv_context* ctx = ibv_open_device(chosen);
  if (ctx == nullptr) {
    return VerbsError("ibv_open_device " + std::string(ibv_get_device_name(chosen)));
  }
  return UniqueContext(ctx);
}

Result<std::vector<OpenedDevice>> OpenEveryDevice(std::vector<std::string>* skipped) {
  int count = 0;
  Result<UniqueDeviceList> list = TakeHandedList(count);
  if (*list == nullptr) list = GetDeviceList(count);
  if (!list) return std::move(list).error();
  std::vector<OpenedDevice> opened;
  for (int i = 0; i < count; ++i) {
    ibv_device* dev = list->get()[i];
    errno = 0;
    ibv_context* ctx = ibv_open_device(dev);
    if (ctx == nullptr) {
      if (skipped != nullptr) {
        skipped->push_back(std::string(ibv_get_device_name(dev)) +
                           ": ibv_open_device: " + std::strerror(errno));
      }
      continue;
    }
    opened.push_back({ibv_get_device_name(dev), UniqueContext(ctx)});
  }
  if (opened.empty()) {
    return Error{
        ErrorCode::kNotFound, ENODEV, "open RDMA devices", "",
        "no RDMA device could be opened (libibverbs listed " + std::to_string(count) + ")"};
  }
  return opened;
}

}  // namespace qpconnect::verbs
