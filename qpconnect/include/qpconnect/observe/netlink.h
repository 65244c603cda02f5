// SPDX-License-Identifier: MIT
// The kernel's view of every QP (what qp-inspect samples into a snapshot,
// snapshot.h): the RDMA netlink "nldev" interface spoken through libmnl (what
// iproute2's `rdma` uses), and /proc and sysfs.
//
//   RDMA_NLDEV_CMD_GET (dump)         devices: index, name, number of ports
//   RDMA_NLDEV_CMD_RES_QP_GET (dump)  every QP of a device: port, lqpn, rqpn,
//                                     type, state, sq/rq PSN, pid or kernel owner
//   RDMA_NLDEV_CMD_RES_CM_ID_GET (dump)  every rdma_cm id of a device (`rdma
//                                     res show cm_id`): its QP's number, source
//                                     and destination addresses (cm_id.h)
//   RDMA_NLDEV_CMD_RES_QP_GET_RAW (dump)  the driver's raw QP contexts (`rdma
//                                     res show qp -r`), for drivers raw_qp.h
//                                     decodes; needs CAP_NET_ADMIN
//   RDMA_NLDEV_CMD_STAT_GET           a port's hw counters (`rdma statistic`);
//                                     /sys/class/infiniband/DEV/ports/N/hw_counters
//                                     when the kernel or driver lacks it
//   /proc/PID/stat                    command and process state of each owner
//
// Attribute ids come from the kernel UAPI header <rdma/rdma_netlink.h>. The
// Parse*() functions read one reply message each and are separate from the
// socket so that tests and benchmarks can feed them built messages.
//
// Thread-safety: a NetlinkReader is used by one thread at a time.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "qpconnect/observe/cm_id.h"
#include "qpconnect/observe/raw_qp.h"
#include "qpconnect/observe/snapshot.h"
#include "qpconnect/result.h"

namespace qpconnect::kernel {

struct NlDevice {
  uint32_t index = 0;
  std::string name;
  uint32_t ports = 0;
};

// One RDMA_NLDEV_CMD_GET reply; false if it names no device.
bool ParseDeviceMessage(const nlmsghdr* nlh, NlDevice* out);

// One RDMA_NLDEV_CMD_RES_QP_GET reply: appends its QPs to `out` (device name
// from the message; pid and kernel owner as the tracker gives them; comm and
// process state are filled later from /proc).
void ParseQpMessage(const nlmsghdr* nlh, std::vector<KernelQp>* out);

// One RDMA_NLDEV_CMD_STAT_GET reply: appends the counters to `out`.
void ParseStatMessage(const nlmsghdr* nlh, KernelPortCounters* out);

// One RDMA_NLDEV_CMD_RES_CM_ID_GET reply: appends its rdma_cm ids to `out`
// (device name from the message; addresses as SockaddrText()).
void ParseCmIdMessage(const nlmsghdr* nlh, std::vector<KernelCmId>* out);

// One RDMA_NLDEV_CMD_RES_QP_GET_RAW reply: appends what `decode` reads from
// each QP entry's RDMA_NLDEV_ATTR_RES_RAW blob (entries it cannot decode
// are skipped).
void ParseQpRawMessage(const nlmsghdr* nlh, RawQpDecoder decode,
                       std::vector<RawQpDestination>* out);

// "CONNECT", "LISTEN", ... for the kernel's enum rdma_cm_state value, as
// iproute2's `rdma res show cm_id` names them.
std::string CmIdStateName(uint8_t state);

// "RC", "UC", "UD", "GSI", ... for the kernel's enum ib_qp_type value.
std::string QpTypeName(uint8_t type);
// "RESET" ... "ERR" for the kernel's enum ib_qp_state value.
std::string QpStateName(uint8_t state);

// Command name and state letter of a process, from PROC_ROOT/PID/stat.
struct ProcessInfo {
  std::string comm;
  std::string state;  // "R", "S", "D", "T", "t", "Z", ...
};
// kNotFound when the process is gone; kIo (with errno) when /proc hides it.
Result<ProcessInfo> ReadProcess(int pid, const std::string& proc_root = "/proc");

// Counters of a port from SYSFS_ROOT/class/infiniband/DEV/ports/N/hw_counters
// (then counters/, where the device has it), in name order; empty when
// neither directory is there. The reader is verbs::ReadSysfsPortCounters
// (qpconnect/verbs/port_counters.h), which a failed traffic proof also uses.
std::vector<std::pair<std::string, uint64_t>> ReadSysfsCounters(
    const std::string& device, uint32_t port, const std::string& sysfs_root = "/sys");

// The kernel driver of a device: the name SYSFS_ROOT/class/infiniband/DEV/
// device/driver links to ("mlx5_core"); "" when there is none (rxe).
std::string ReadSysfsDriver(const std::string& device, const std::string& sysfs_root = "/sys");

// The identity of a port from SYSFS_ROOT/class/infiniband/DEV/ports/N: its
// link layer (`link_layer`), LID (`lid`, hex), LMC (`lid_mask_count`), the
// SM's LID (`sm_lid`, hex), the valid entries of its GID table (`gids/K` by
// index; zero entries and those the kernel refuses to read are left out) and
// the subnet prefix (the upper half of GID 0). Fields it cannot read stay 0
// or empty.
PortIdentity ReadSysfsPortIdentity(const std::string& device, uint32_t port,
                                   const std::string& sysfs_root = "/sys");

// What a snapshot is read from the kernel through; a fake stands in for it in tests.
class KernelReader {
 public:
  virtual ~KernelReader() = default;
  // The devices the kernel shows this process. kNotFound with a sentence when
  // it has no RDMA netlink (no RDMA support, ib_core not loaded); kIo when a
  // query fails.
  virtual Result<std::vector<NlDevice>> Devices() = 0;
  // Every QP and port counter of `devices` now, with each owner's command and
  // process state, and each QP's destination where the kernel shows it (its
  // rdma_cm id's addresses; the remote GID and LID of a raw context that
  // raw_qp.h decodes). Notes on what could not be seen go to `notes`.
  virtual Result<KernelSample> Sample(const std::vector<NlDevice>& devices,
                                      std::vector<std::string>* notes) = 0;
  // The identity of every port of `devices` (the host identity a snapshot
  // carries); none by default.
  virtual std::vector<PortIdentity> Identity(const std::vector<NlDevice>& devices) {
    (void)devices;
    return {};
  }
  // The RoCE paths of the connected QPs of `sample` (kernel_paths.h). The
  // default reads none.
  virtual std::vector<ObservedPath> Paths(const KernelSample& sample) {
    (void)sample;
    return {};
  }
};

// The reader over a NETLINK_RDMA socket, /proc and /sys.
std::unique_ptr<KernelReader> MakeNetlinkReader();

}  // namespace qpconnect::kernel
