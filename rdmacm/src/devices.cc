// SPDX-License-Identifier: MIT
#include "devices.h"

#include <cerrno>
#include <cstring>

#include "log.h"
#include "qpconnect/composer.h"
#include "qpconnect/verbs/verbs_error.h"
#include "warm.h"

namespace qpconnect::rdmacm {

Result<std::vector<Device*>*> Devices() {
  static std::vector<Device*>* devices = nullptr;  // never freed: see the header
  if (devices != nullptr) return devices;
  std::vector<std::string> skipped;
  auto opened = verbs::OpenEveryDevice(&skipped);
  for (const std::string& s : skipped) LogLine("devices: " + s);
  if (!opened) return std::move(opened).error();
  auto* list = new std::vector<Device*>;
  for (verbs::OpenedDevice& o : *opened) {
    auto* d = new Device;
    d->name = std::move(o.name);
    d->context = std::move(o.context);
    d->ctx = d->context.get();
    d->ports = ibv_query_device(d->ctx, &d->attr) == 0 ? d->attr.phys_port_cnt : 1;
    list->push_back(d);
  }
  devices = list;
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
  if (!device.default_pd) {
    auto pd = verbs::AllocPd(*device.ctx);
    if (!pd) {
      Error e = std::move(pd).error();
      e.detail += (e.detail.empty() ? "" : " ") + std::string("on ") + device.name;
      return e;
    }
    device.default_pd = std::move(*pd);
  }
  return device.default_pd.get();
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
  // The first port described: rehearse on it, and on its device (warm.h).
  WarmUpWith(pos->second.endpoint, device.ctx);
  return &pos->second;
}

}  // namespace qpconnect::rdmacm
