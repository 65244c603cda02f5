// SPDX-License-Identifier: MIT
#include "qpconnect/observe/netlink.h"

#include <dirent.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "qpconnect/observe/kernel_paths.h"
#include "qpconnect/verbs/port_counters.h"

namespace qpconnect::kernel {
namespace {

// Attributes of one message or nest, by id.
struct Attrs {
  const nlattr* tb[RDMA_NLDEV_ATTR_MAX] = {};

  const nlattr* Get(int id, mnl_attr_data_type type) const {
    const nlattr* a = tb[id];
    return a != nullptr && mnl_attr_validate(a, type) >= 0 ? a : nullptr;
  }
  std::optional<uint32_t> U32(int id) const {
    const nlattr* a = Get(id, MNL_TYPE_U32);
    return a != nullptr ? std::optional<uint32_t>(mnl_attr_get_u32(a)) : std::nullopt;
  }
  std::optional<uint8_t> U8(int id) const {
    const nlattr* a = Get(id, MNL_TYPE_U8);
    return a != nullptr ? std::optional<uint8_t>(mnl_attr_get_u8(a)) : std::nullopt;
  }
  std::optional<uint64_t> U64(int id) const {
    const nlattr* a = Get(id, MNL_TYPE_U64);
    return a != nullptr ? std::optional<uint64_t>(mnl_attr_get_u64(a)) : std::nullopt;
  }
  std::string Str(int id) const {
    const nlattr* a = Get(id, MNL_TYPE_NUL_STRING);
    return a != nullptr ? std::string(mnl_attr_get_str(a)) : std::string();
  }
};

int StoreAttr(const nlattr* attr, void* data) {
  // Attributes newer than the UAPI header this was built with are skipped.
  if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0) return MNL_CB_OK;
  static_cast<Attrs*>(data)->tb[mnl_attr_get_type(attr)] = attr;
  return MNL_CB_OK;
}

int CollectNested(const nlattr* attr, void* data) {
  static_cast<std::vector<const nlattr*>*>(data)->push_back(attr);
  return MNL_CB_OK;
}

Attrs ParseMessage(const nlmsghdr* nlh) {
  Attrs a;
  mnl_attr_parse(nlh, 0, StoreAttr, &a);
  return a;
}

// The entries (each a nest) of the table nest `table`.
std::vector<const nlattr*> Entries(const Attrs& a, int table) {
  std::vector<const nlattr*> out;
  if (const nlattr* t = a.Get(table, MNL_TYPE_NESTED))
    mnl_attr_parse_nested(t, CollectNested, &out);
  return out;
}

Attrs ParseNest(const nlattr* nest) {
  Attrs a;
  mnl_attr_parse_nested(nest, StoreAttr, &a);
  return a;
}

uint16_t MessageType(uint32_t cmd) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
}

class NetlinkSocket {
 public:
  ~NetlinkSocket() {
    if (nl_ != nullptr) mnl_socket_close(nl_);
  }

  Result<void> Open() {
    nl_ = mnl_socket_open(NETLINK_RDMA);
    if (nl_ == nullptr) {
      const int e = errno;
      return Error{ErrorCode::kNotFound, e, "socket(NETLINK_RDMA)", "",
                   "the kernel has no RDMA netlink: no RDMA support, or the ib_core module "
                   "is not loaded"};
    }
    if (mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0) {
      return ErrnoError(ErrorCode::kIo, errno, "bind(NETLINK_RDMA)");
    }
    portid_ = mnl_socket_get_portid(nl_);
    seq_ = static_cast<uint32_t>(std::time(nullptr));
    return Ok();
  }

  // Sends command `cmd` (a dump when `dump`) with the device and port
  // attributes given, and calls `on_message` for each reply.
  Result<void> Transact(uint32_t cmd, bool dump, std::optional<uint32_t> dev,
                        std::optional<uint32_t> port,
                        const std::function<void(const nlmsghdr*)>& on_message,
                        const std::string& what) {
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.data());
    nlh->nlmsg_type = MessageType(cmd);
    nlh->nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0));
    const uint32_t seq = ++seq_;
    nlh->nlmsg_seq = seq;
    if (dev) mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, *dev);
    if (port) mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, *port);
    if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0)
      return ErrnoError(ErrorCode::kIo, errno, what);
    for (;;) {
      const ssize_t n = mnl_socket_recvfrom(nl_, buf_.data(), buf_.size());
      if (n < 0) return ErrnoError(ErrorCode::kIo, errno, what);
      const int rc = mnl_cb_run(
          buf_.data(), static_cast<size_t>(n), seq, portid_,
          [](const nlmsghdr* m, void* data) -> int {
            (*static_cast<const std::function<void(const nlmsghdr*)>*>(data))(m);
            return MNL_CB_OK;
          },
          const_cast<std::function<void(const nlmsghdr*)>*>(&on_message));
      if (rc == MNL_CB_ERROR) return ErrnoError(ErrorCode::kIo, errno, what);
      if (rc == MNL_CB_STOP) return Ok();
    }
  }

 private:
  mnl_socket* nl_ = nullptr;
  uint32_t portid_ = 0;
  uint32_t seq_ = 0;
  // Large enough for the kernel's dump messages (it fills up to 32 KiB).
  std::vector<char> buf_ = std::vector<char>(size_t{1} << 16);
};

class NetlinkReader : public KernelReader {
 public:
  Result<std::vector<NlDevice>> Devices() override {
    if (Result<void> r = Connect(); !r) return r.error();
    std::vector<NlDevice> out;
    Result<void> r = socket_->Transact(
        RDMA_NLDEV_CMD_GET, true, std::nullopt, std::nullopt,
        [&](const nlmsghdr* m) {
          NlDevice d;
          if (ParseDeviceMessage(m, &d)) out.push_back(std::move(d));
        },
        "RDMA_NLDEV_CMD_GET (list devices)");
    if (!r) return r.error();
    std::sort(out.begin(), out.end(),
              [](const NlDevice& a, const NlDevice& b) { return a.name < b.name; });
    return out;
  }

  std::vector<PortIdentity> Identity(const std::vector<NlDevice>& devices) override {
    std::vector<PortIdentity> out;
    for (const NlDevice& d : devices) {
      for (uint32_t port = 1; port <= d.ports; ++port) {
        out.push_back(ReadSysfsPortIdentity(d.name, port));
      }
    }
    return out;
  }

  Result<KernelSample> Sample(const std::vector<NlDevice>& devices,
                              std::vector<std::string>* notes) override {
    if (Result<void> r = Connect(); !r) return r.error();
    KernelSample sample;
    for (const NlDevice& d : devices) {
      const size_t first = sample.qps.size();
      Result<void> r = socket_->Transact(
          RDMA_NLDEV_CMD_RES_QP_GET, true, d.index, std::nullopt,
          [&](const nlmsghdr* m) { ParseQpMessage(m, &sample.qps); },
          "RDMA_NLDEV_CMD_RES_QP_GET (QPs of " + d.name + ")");
      if (!r) return r.error();
      std::span<KernelQp> qps(sample.qps.begin() + static_cast<std::ptrdiff_t>(first),
                              sample.qps.end());
      CmIds(d, qps, notes);
      RawContexts(d, qps, notes);
      for (uint32_t port = 1; port <= d.ports; ++port)
        sample.ports.push_back(Counters(d, port, notes));
    }
    FillProcesses(&sample, notes);
    return sample;
  }

  std::vector<ObservedPath> Paths(const KernelSample& sample) override {
    return ReadQpPaths(sample, KernelPathSources());
  }

 private:
  Result<void> Connect() {
    if (socket_) return Ok();
    auto s = std::make_unique<NetlinkSocket>();
    if (Result<void> r = s->Open(); !r) return r;
    socket_ = std::move(s);
    return Ok();
  }

  // The rdma_cm ids of `d`: their addresses onto the QPs they carry.
  void CmIds(const NlDevice& d, std::span<KernelQp> qps, std::vector<std::string>* notes) {
    std::vector<KernelCmId> cm_ids;
    Result<void> r = socket_->Transact(
        RDMA_NLDEV_CMD_RES_CM_ID_GET, true, d.index, std::nullopt,
        [&](const nlmsghdr* m) { ParseCmIdMessage(m, &cm_ids); },
        "RDMA_NLDEV_CMD_RES_CM_ID_GET (rdma_cm ids of " + d.name + ")");
    if (!r) {
      if (warned_.insert("cm_id/" + d.name).second) {
        notes->push_back("the rdma_cm ids of " + d.name + " could not be read (" +
                         r.error().ToString() + "): its rdma_cm QPs have no destination address");
      }
      return;
    }
    AttachCmIds(cm_ids, qps);
  }

  // The raw QP contexts of `d`, when raw_qp.h decodes its driver's: each
  // QP's remote GID and LID.
  void RawContexts(const NlDevice& d, std::span<KernelQp> qps, std::vector<std::string>* notes) {
    auto [it, inserted] = driver_of_.try_emplace(d.name);
    if (inserted) it->second = ReadSysfsDriver(d.name);
    const RawQpDriver* driver = FindRawQpDriver(it->second);
    if (driver == nullptr || qps.empty()) return;
    std::vector<RawQpDestination> found;
    Result<void> r = socket_->Transact(
        RDMA_NLDEV_CMD_RES_QP_GET_RAW, true, d.index, std::nullopt,
        [&](const nlmsghdr* m) { ParseQpRawMessage(m, driver->decode, &found); },
        "RDMA_NLDEV_CMD_RES_QP_GET_RAW (raw QP contexts of " + d.name + ")");
    if (!r) {
      if (warned_.insert("raw/" + d.name).second) {
        notes->push_back("the raw QP contexts of " + d.name + " (" + std::string(driver->driver) +
                         ") could not be read (" + r.error().ToString() +
                         "; they need CAP_NET_ADMIN): its QPs' destinations come from rdma_cm "
                         "ids only");
      }
      return;
    }
    std::map<uint32_t, const RawQpDestination*> by_qpn;
    for (const RawQpDestination& f : found) by_qpn[f.lqpn] = &f;
    size_t refused = 0;
    for (KernelQp& q : qps) {
      auto f = by_qpn.find(q.lqpn);
      if (f != by_qpn.end() && !ApplyRawDestination(*f->second, &q)) ++refused;
    }
    if (refused != 0 && warned_.insert("raw-refused/" + d.name).second) {
      notes->push_back(std::to_string(refused) + " raw QP context(s) of " + d.name +
                       " name another remote QP than the tracker's rqpn: not used (the "
                       "driver's layout is not the one decoded: " +
                       std::string(driver->layout) + ")");
    }
  }

  KernelPortCounters Counters(const NlDevice& d, uint32_t port, std::vector<std::string>* notes) {
    KernelPortCounters c;
    c.device = d.name;
    c.port = static_cast<uint8_t>(port);
    Result<void> r = socket_->Transact(
        RDMA_NLDEV_CMD_STAT_GET, false, d.index, port,
        [&](const nlmsghdr* m) { ParseStatMessage(m, &c); }, "RDMA_NLDEV_CMD_STAT_GET");
    if (r && !c.counters.empty()) return c;
    c.counters = ReadSysfsCounters(d.name, port);
    const std::string key = d.name + "/" + std::to_string(port);
    if (c.counters.empty() && warned_.insert(key).second) {
      notes->push_back(d.name + " port " + std::to_string(port) + " shows no hw counters (" +
                       (r ? std::string("none reported") : r.error().ToString()) +
                       "): counter evidence is missing for its QPs");
    }
    return c;
  }

  void FillProcesses(KernelSample* sample, std::vector<std::string>* notes) {
    std::map<int, ProcessInfo> seen;
    size_t hidden = 0;
    for (KernelQp& q : sample->qps) {
      if (q.pid == 0) continue;
      auto it = seen.find(q.pid);
      if (it == seen.end()) {
        Result<ProcessInfo> p = ReadProcess(q.pid);
        if (!p) ++hidden;
        it = seen.emplace(q.pid, p ? *p : ProcessInfo{}).first;
      }
      q.comm = it->second.comm;
      q.process_state = it->second.state;
    }
    if (hidden != 0 && !hidden_noted_) {
      hidden_noted_ = true;
      notes->push_back("/proc/PID/stat of " + std::to_string(hidden) +
                       " QP owner(s) could not be read (the process exited meanwhile, or /proc "
                       "is mounted with hidepid and this user may not see it): their command "
                       "and process state are unknown");
    }
  }

  std::unique_ptr<NetlinkSocket> socket_;
  std::map<std::string, std::string> driver_of_;  // device -> kernel driver
  std::set<std::string> warned_;
  bool hidden_noted_ = false;
};

}  // namespace

bool ParseDeviceMessage(const nlmsghdr* nlh, NlDevice* out) {
  const Attrs a = ParseMessage(nlh);
  const std::optional<uint32_t> index = a.U32(RDMA_NLDEV_ATTR_DEV_INDEX);
  std::string name = a.Str(RDMA_NLDEV_ATTR_DEV_NAME);
  if (!index || name.empty()) return false;
  out->index = *index;
  out->name = std::move(name);
  out->ports = a.U32(RDMA_NLDEV_ATTR_PORT_INDEX).value_or(0);
  return true;
}

void ParseQpMessage(const nlmsghdr* nlh, std::vector<KernelQp>* out) {
  const Attrs a = ParseMessage(nlh);
  const std::string device = a.Str(RDMA_NLDEV_ATTR_DEV_NAME);
  for (const nlattr* entry : Entries(a, RDMA_NLDEV_ATTR_RES_QP)) {
    const Attrs e = ParseNest(entry);
    const std::optional<uint32_t> lqpn = e.U32(RDMA_NLDEV_ATTR_RES_LQPN);
    if (!lqpn) continue;
    KernelQp q;
    q.device = device;
    q.port = static_cast<uint8_t>(e.U32(RDMA_NLDEV_ATTR_PORT_INDEX).value_or(0));
    q.lqpn = *lqpn;
    q.rqpn = e.U32(RDMA_NLDEV_ATTR_RES_RQPN);
    q.rq_psn = e.U32(RDMA_NLDEV_ATTR_RES_RQ_PSN);
    q.sq_psn = e.U32(RDMA_NLDEV_ATTR_RES_SQ_PSN);
    if (auto t = e.U8(RDMA_NLDEV_ATTR_RES_TYPE)) q.type = QpTypeName(*t);
    if (auto s = e.U8(RDMA_NLDEV_ATTR_RES_STATE)) q.state = QpStateName(*s);
    if (auto m = e.U8(RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE)) {
      static const char* const kMig[] = {"MIGRATED", "REARM", "ARMED"};
      q.path_mig_state = *m < 3 ? kMig[*m] : std::to_string(*m);
    }
    q.pid = static_cast<int>(e.U32(RDMA_NLDEV_ATTR_RES_PID).value_or(0));
    q.comm = e.Str(RDMA_NLDEV_ATTR_RES_KERN_NAME);  // kernel QPs; processes' from /proc
    out->push_back(std::move(q));
  }
}

void ParseStatMessage(const nlmsghdr* nlh, KernelPortCounters* out) {
  const Attrs a = ParseMessage(nlh);
  for (const nlattr* entry : Entries(a, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS)) {
    const Attrs e = ParseNest(entry);
    std::string name = e.Str(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME);
    const std::optional<uint64_t> value = e.U64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE);
    if (!name.empty() && value) out->counters.push_back({std::move(name), *value});
  }
}

void ParseCmIdMessage(const nlmsghdr* nlh, std::vector<KernelCmId>* out) {
  const Attrs a = ParseMessage(nlh);
  const std::string device = a.Str(RDMA_NLDEV_ATTR_DEV_NAME);
  auto address = [](const Attrs& e, int id) {
    const nlattr* x = e.Get(id, MNL_TYPE_BINARY);
    return x != nullptr ? SockaddrText(mnl_attr_get_payload(x), mnl_attr_get_payload_len(x))
                        : std::string();
  };
  for (const nlattr* entry : Entries(a, RDMA_NLDEV_ATTR_RES_CM_ID)) {
    const Attrs e = ParseNest(entry);
    KernelCmId c;
    c.device = device;
    c.lqpn = e.U32(RDMA_NLDEV_ATTR_RES_LQPN).value_or(0);
    c.pid = static_cast<int>(e.U32(RDMA_NLDEV_ATTR_RES_PID).value_or(0));
    if (auto st = e.U8(RDMA_NLDEV_ATTR_RES_STATE)) c.state = CmIdStateName(*st);
    c.src_addr = address(e, RDMA_NLDEV_ATTR_RES_SRC_ADDR);
    c.dst_addr = address(e, RDMA_NLDEV_ATTR_RES_DST_ADDR);
    out->push_back(std::move(c));
  }
}

void ParseQpRawMessage(const nlmsghdr* nlh, RawQpDecoder decode,
                       std::vector<RawQpDestination>* out) {
  const Attrs a = ParseMessage(nlh);
  for (const nlattr* entry : Entries(a, RDMA_NLDEV_ATTR_RES_QP)) {
    const Attrs e = ParseNest(entry);
    const nlattr* raw = e.Get(RDMA_NLDEV_ATTR_RES_RAW, MNL_TYPE_BINARY);
    if (raw == nullptr) continue;
    const auto* bytes = static_cast<const uint8_t*>(mnl_attr_get_payload(raw));
    if (auto d = decode(std::span<const uint8_t>(bytes, mnl_attr_get_payload_len(raw)))) {
      out->push_back(*d);
    }
  }
}

// enum rdma_cm_state of the kernel (drivers/infiniband/core/cma_priv.h), in
// its order.
std::string CmIdStateName(uint8_t state) {
  static const char* const kStates[] = {
      "IDLE",       "ADDR_QUERY", "ADDR_RESOLVED", "ROUTE_QUERY",    "ROUTE_RESOLVED", "CONNECT",
      "DISCONNECT", "ADDR_BOUND", "LISTEN",        "DEVICE_REMOVAL", "DESTROYING"};
  return state < std::size(kStates) ? kStates[state] : "STATE_" + std::to_string(state);
}

// enum ib_qp_type and enum ib_qp_state of the kernel (include/rdma/ib_verbs.h),
// which the tracker reports as they are; iproute2's rdma/res-qp.c names them
// the same way.
std::string QpTypeName(uint8_t type) {
  switch (type) {
    case 0:
      return "SMI";
    case 1:
      return "GSI";
    case 2:
      return "RC";
    case 3:
      return "UC";
    case 4:
      return "UD";
    case 5:
      return "RAW_IPV6";
    case 6:
      return "RAW_ETHERTYPE";
    case 8:
      return "RAW_PACKET";
    case 9:
      return "XRC_INI";
    case 10:
      return "XRC_TGT";
    case 0xff:
      return "DRIVER";
    default:
      return "TYPE_" + std::to_string(type);
  }
}

std::string QpStateName(uint8_t state) {
  static const char* const kStates[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
  return state < 7 ? kStates[state] : "STATE_" + std::to_string(state);
}

Result<ProcessInfo> ReadProcess(int pid, const std::string& proc_root) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/stat";
  std::ifstream f(path);
  if (!f) {
    const int e = errno;
    return ErrnoError(e == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, e, "read " + path);
  }
  std::string line;
  std::getline(f, line);
  // "PID (COMM) S ...": COMM may hold spaces and parentheses; it ends at the
  // last ')'.
  const size_t open = line.find('(');
  const size_t close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open ||
      close + 2 >= line.size()) {
    return Error{ErrorCode::kIo, 0, "read " + path, "", "unexpected format"};
  }
  return ProcessInfo{line.substr(open + 1, close - open - 1), line.substr(close + 2, 1)};
}

std::vector<std::pair<std::string, uint64_t>> ReadSysfsCounters(const std::string& device,
                                                                uint32_t port,
                                                                const std::string& sysfs_root) {
  // The one sysfs reader of port counters, also the traffic proof's.
  return verbs::ReadSysfsPortCounters(device, port, sysfs_root + "/class/infiniband").values;
}

std::string ReadSysfsDriver(const std::string& device, const std::string& sysfs_root) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(
      sysfs_root + "/class/infiniband/" + device + "/device/driver", ec);
  return ec ? std::string() : target.filename().string();
}

PortIdentity ReadSysfsPortIdentity(const std::string& device, uint32_t port,
                                   const std::string& sysfs_root) {
  const std::string dir =
      sysfs_root + "/class/infiniband/" + device + "/ports/" + std::to_string(port);
  PortIdentity id;
  id.device = device;
  id.port = static_cast<uint8_t>(port);
  auto word = [&](const char* name) {  // the file's first word; "" when unreadable
    std::ifstream f(dir + "/" + name);
    std::string text;
    f >> text;
    return text;
  };
  auto lid = [&](const char* name) {  // "0x1a"
    const std::string text = word(name);
    return static_cast<uint16_t>(text.empty() ? 0 : std::strtoul(text.c_str(), nullptr, 16));
  };
  id.link_layer = word("link_layer");
  id.lid = lid("lid");
  id.sm_lid = lid("sm_lid");
  {
    std::ifstream f(dir + "/lid_mask_count");
    unsigned lmc = 0;
    if (f >> lmc) id.lmc = static_cast<uint8_t>(std::min(lmc, 7u));
  }
  std::vector<std::pair<unsigned long, Gid>> gids;
  if (DIR* d = opendir((dir + "/gids").c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.empty() || name[0] == '.') continue;
      std::ifstream f(dir + "/gids/" + name);
      std::string text;
      if (!(f >> text)) continue;  // unreadable entries (EINVAL on empty RoCE slots)
      std::optional<Gid> gid = GidFromString(text);
      if (gid && !IsZeroGid(*gid)) gids.push_back({std::strtoul(name.c_str(), nullptr, 10), *gid});
    }
    closedir(d);
  }
  std::sort(gids.begin(), gids.end());
  for (const auto& [index, gid] : gids) id.gids.push_back(gid);
  if (!gids.empty() && gids.front().first == 0)
    id.subnet_prefix = GidSubnetPrefix(gids.front().second);
  return id;
}

std::unique_ptr<KernelReader> MakeNetlinkReader() { return std::make_unique<NetlinkReader>(); }

}  // namespace qpconnect::kernel
