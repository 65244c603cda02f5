#include "devices.h"

#include <cerrno>
#include <cstring>

#include "qpconnect/composer.h"
#include "qpconnect/verbs/verbs_error.h"
#include "warm.h"

namespace qpconnect::rdmacm {

Result<std::vector<Device*>*> Devices() {
  static std::vector<Device*>* devices = nullptr;  // never freed: see the header
  if (devices != nullptr) return devices;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr)
    return Error(ErrorCode::kNotFound, errno, "ibv_get_device_list", "",
                 std::string("libibverbs cannot list RDMA devices: ") + std::strerror(errno));
  auto* opened = new std::vector<Device*>;
  for (int i = 0; i < n; ++i) {
    ibv_context* ctx = ibv_open_device(list[i]);
    if (ctx == nullptr) continue;
    auto* d = new Device;
    d->name = ibv_get_device_name(list[i]);
    d->ctx = ctx;
    d->ports = ibv_query_device(ctx, &d->attr) == 0 ? d->attr.phys_port_cnt : 1;
    opened->push_back(d);
  }
  ibv_free_device_list(list);
  if (opened->empty()) {
    delete opened;
    return Error(
        ErrorCode::kNotFound, ENODEV, "open RDMA devices", "",
        "no RDMA device could be opened (ibv_get_device_list found " + std::to_string(n) + ")");
  }
  devices = opened;
  return devices;
}

Device* DeviceByContext(ibv_context* ctx) {
  auto devices = Devices();
  if (!devices) return nullptr;
  for (Device* d : **devices)
    if (d->ctx == ctx) return d;
  return nullptr;
}

Result<ibv_pd*> DefaultPd(Device& device) {
  if (device.pd == nullptr) {
    device.pd = ibv_alloc_pd(device.ctx);
    if (device.pd == nullptr)
      return Error(ErrorCode::kVerbs, errno, "ibv_alloc_pd", "", "on " + device.name);
  }
  return device.pd;
}

Result<const verbs::LocalDescription*> Describe(Device& device, uint8_t port,
                                                std::optional<uint16_t> gid_index) {
  auto key = std::make_pair(port, gid_index ? int{*gid_index} : -1);
  auto it = device.described.find(key);
  if (it != device.described.end()) return &it->second;
  verbs::DescribeOptions options;
  options.port = port;
  options.gid.index = gid_index;
  auto described = verbs::DescribeLocal(*device.ctx, options);
  if (!described) return std::move(described).error();
  // As every front end's before its description goes out (composer.h): a
  // GID not given by the program's address takes part in the joint choice
  // with the peer's (gid_pair.h), and the netdevs are published.
  Composer(verbs::QpEnv::Default()).Prepare(described->endpoint);
  auto [pos, inserted] = device.described.emplace(key, std::move(*described));
  WarmUpWith(pos->second.endpoint);  // the first port described: rehearse on it (warm.h)
  return &pos->second;
}

}  // namespace qpconnect::rdmacm
