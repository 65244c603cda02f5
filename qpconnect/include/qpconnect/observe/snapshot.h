// SPDX-License-Identifier: MIT
// A kernel snapshot: what `qp-inspect` read from the kernel's RDMA resource
// tracker (netlink RDMA_NLDEV_CMD_RES_QP_GET, what `rdma res show qp` shows),
// the port counters and /proc, in one or two samples taken an interval apart,
// so that moving and stuck QPs can be told apart.
//
// The raw samples are kept as read (the snapshot file stores them; see
// docs/inspect.md for its JSON form). AddSnapshot() merges them into the
// Observation model (observed.h) that pairing (pairing.h) and the live judge
// (live_judge.h) work on: one ObservedQp per QP with its samples, one
// ObservedPortCounters per port with its first and last values.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qpconnect/observe/observed.h"

namespace qpconnect {

// One QP as the resource tracker lists it in one sample.
struct KernelQp {
  std::string device;  // "rxe0"
  uint8_t port = 0;    // 0 before the QP is bound to a port (RESET)
  uint32_t lqpn = 0;   // the QP's number
  // RC and UC only: the peer QP's number (dest_qp_num) and the next PSN this
  // QP expects to receive. The kernel reports them from INIT on (as 0 before
  // RTR).
  std::optional<uint32_t> rqpn;
  std::optional<uint32_t> rq_psn;
  std::optional<uint32_t> sq_psn;  // the next PSN this QP will send
  std::string type;                // "RC", "UC", "UD", "GSI", "SMI", "XRC_INI", ...
  std::string state;               // "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"
  std::string path_mig_state;      // "MIGRATED", "REARM", "ARMED"; "" when not reported
  int pid = 0;                     // owning process; 0 for a kernel QP
  std::string comm;                // the process's command, or the kernel owner ("ib_core")
  // The destination address in the QP's context, when the kernel exposes it:
  // a driver's raw QP context (raw_qp.h; mlx5). nullopt otherwise, which is
  // the rule for rxe and for the tracker's plain attributes.
  std::optional<Gid> dgid;
  std::optional<uint16_t> dlid;
  // The QP's rdma_cm id, when it has one (cm_id.h): its source and
  // destination addresses as read ("10.99.0.1:7174", "[fe80::1]:7174"); ""
  // for a QP not made through rdma_cm.
  std::string src_addr;
  std::string dst_addr;
  // Where dgid/dlid came from when not from the kernel: "published" (the
  // process published its peer: observe/published_peers.h); "" the kernel's.
  std::string dest_source;
  // /proc/PID/stat field 3: "R" running, "S" sleeping, "D" disk sleep, "T"
  // stopped, "t" traced, "Z" zombie, ...; "" when unknown (kernel QP, or
  // /proc hides the process).
  std::string process_state;

  friend bool operator==(const KernelQp&, const KernelQp&) = default;
};

// The counters of one port in one sample, as the driver names them
// (`rdma statistic show`, /sys/class/infiniband/DEV/ports/N/hw_counters).
struct KernelPortCounters {
  std::string device;
  uint8_t port = 0;
  std::vector<std::pair<std::string, uint64_t>> counters;  // in the order read

  friend bool operator==(const KernelPortCounters&, const KernelPortCounters&) = default;
};

struct KernelSample {
  double at_seconds = 0;  // since the first sample
  std::vector<KernelQp> qps;
  std::vector<KernelPortCounters> ports;

  friend bool operator==(const KernelSample&, const KernelSample&) = default;
};

struct Snapshot {
  std::string host;      // the host the samples were read on
  std::string taken_at;  // time of the first sample, ISO 8601 UTC ("2026-11-23T05:20:00Z")
  // The first sample's start on this host's wall clock, seconds since the
  // epoch (sub-second); 0 when unknown. Snapshots of many hosts taken "at the
  // same moment" (qp-inspect --at, --mpi) are compared by it: their skew.
  double started_epoch = 0;
  std::string tool;                   // who wrote it: "qp-inspect (qpconnect) 0.1.0"
  std::vector<KernelSample> samples;  // one or two, oldest first
  // The host identity: every port's link layer, GIDs, LIDs and subnet prefix,
  // read once (sysfs), so that peers' destination addresses can be matched to
  // this host across a job. Empty when unknown (files written before it existed).
  std::vector<PortIdentity> identity;
  std::string job;  // the job the snapshot was taken for ("" unknown)
  // What the reader could not see (e.g. "/proc hides other users' processes").
  std::vector<std::string> notes;
  // Connected RoCE QPs of the last sample: their path facts (ObservedPath).
  std::vector<ObservedPath> paths;

  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

// Seconds between the first and the last sample; 0 with one sample.
double SnapshotInterval(const Snapshot& snapshot);

// How far apart the first samples of `snapshots` started: the largest minus
// the smallest started_epoch among those that know it (0 with fewer than two).
// Across hosts this includes the difference of their wall clocks.
double SnapshotSkewSeconds(const std::vector<Snapshot>& snapshots);

// Appends the QPs and ports of `snapshot` to `out`: one ObservedQp (source
// kSnapshot, origin `origin`, host snapshot.host) per QP, identified by
// (device, lqpn, pid) across the samples. Each gets one ObservedSample per
// sample it appears in; its state, port, type and dest_qpn are those of its
// last sample. dest_qpn is set for RC and UC QPs past INIT (RTR, RTS, SQD,
// SQE, ERR) whose rqpn is not 0. dest_gid and dest_lid are the QP's dgid and
// dlid; without a dgid, an RC or UC QP's cm_id destination gives dest_gid
// where the snapshot's identity shows that its port's addresses are its GIDs
// (DestinationGidOfCmId, cm_id.h). A QP present in an earlier sample but not in
// the last one is marked `destroyed` (it was destroyed, or its process
// exited, during the interval). Each port's counters become one
// ObservedPortCounters with its first and last values and the interval. The
// host, its job and its identity become one ObservedHost.
void AddSnapshot(const Snapshot& snapshot, const std::string& origin, Observation* out);

}  // namespace qpconnect
