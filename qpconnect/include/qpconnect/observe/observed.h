// SPDX-License-Identifier: MIT
// The observed QP: one model of a queue pair as some outside source saw it,
// whichever the source, so that one pairing and one judge serve them all:
//   trace     qp-trace's preload recorded the program's verbs calls: every
//             transition with its attributes, mask, result and errno, and the
//             port/GID/P_Key it queried (docs/trace.md);
//   snapshot  qp-inspect read the kernel's resource tracker: state, rqpn, PSNs,
//             pid, command, process state, in two samples (docs/inspect.md);
//   dump      qp-connect --dump: the description and the plan it applied.
// Each source fills what it can see and leaves the rest unset: a snapshot
// has no path MTU or GID; a trace has no live PSN progress.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qpconnect/endpoint.h"
#include "qpconnect/plan.h"

namespace qpconnect {

enum class ObservedSource : uint8_t { kTrace, kSnapshot, kDump };

// An optional value kept on the heap, with std::optional's manners (bool
// test, *, ->, assignment of a value, reset) and value semantics (copies
// copy the value). ObservedQp holds a trace's description and applied
// attributes in it: a snapshot's million QPs have neither and should not each
// carry their room (some 400 bytes).
template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(const T& v) : p_(std::make_unique<T>(v)) {}        // NOLINT: like optional
  HeapOptional(T&& v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT: like optional
  HeapOptional(std::nullopt_t) {}                                 // NOLINT: like optional
  HeapOptional(const HeapOptional& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const T& v) {
    p_ = std::make_unique<T>(v);
    return *this;
  }
  HeapOptional& operator=(T&& v) {
    p_ = std::make_unique<T>(std::move(v));
    return *this;
  }
  HeapOptional& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  explicit operator bool() const { return p_ != nullptr; }
  bool has_value() const { return p_ != nullptr; }
  void reset() { p_.reset(); }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }

 private:
  std::unique_ptr<T> p_;
};

// "trace", "snapshot", "dump".
const char* ObservedSourceName(ObservedSource source);

// The transport of a QP type as traces and the kernel name it ("RC", "UC",
// "UD"); nullopt for a type the validator does not judge (XRC_INI, GSI, ...).
std::optional<Transport> TransportOfTypeName(std::string_view type_name);

// One ibv_modify_qp call as the traced program made it.
struct ObservedTransition {
  std::string from;  // "RESET", "INIT", "RTR", "RTS", ... ("" when unknown)
  std::string to;
  int mask = 0;       // the attr_mask passed
  QpAttrs attrs;      // the values passed (those outside `mask` are meaningless)
  int result = 0;     // ibv_modify_qp's return value
  int sys_errno = 0;  // its errno meaning (0 on success)
};

// One sample of a QP's live state (snapshot).
struct ObservedSample {
  double at_seconds = 0;           // since the first sample
  std::string state;               // "RTS", "ERR", ...
  std::optional<uint32_t> sq_psn;  // next PSN the sender will use
  std::optional<uint32_t> rq_psn;  // next PSN the receiver expects
  std::string process_state;       // "R", "S", "T" (stopped), "Z" (zombie), "" unknown
};

// The kernel's facts on the RoCE path of a connected QP towards its peer, as
// qp-inspect read them with the last sample (issue 31 item 5; the same
// reader as qp-connect's checks before RTR, qpconnect/verbs/kernel_path.h).
// The kernel does not show a QP's GIDs: the source is the QP's port's
// routable RoCE v2 address, the destination the routable address of the
// port of the QP its rqpn names, when that QP is in the same snapshot and
// names it back. Whatever could not be found is said in `unknown`.
struct ObservedPath {
  // Which QP (snapshot key).
  std::string device;
  uint8_t port = 0;
  uint32_t lqpn = 0;
  int pid = 0;
  std::string source;             // "10.99.0.2"; empty: the port has no routable address
  std::string destination;        // "10.99.0.1"; empty: unknown (see unknown)
  std::string peer;               // "rxe0 QP 17" when the peer is in the snapshot
  bool source_gone = false;       // the QP's port has no routable RoCE v2 address (removed?)
  bool destination_gone = false;  // the peer's port has none
  std::string netdev;             // the source's netdev
  std::string facts;              // RocePathText() of the path read; empty when none was read
  std::string route_error;        // no route: the kernel's refusal
  std::string neighbour_address;  // the next hop
  std::string neighbour_state;    // "PERMANENT", "FAILED", ...; empty: no entry
  std::string neighbour_mac;      // "02:00:0a:63:00:01"; empty unresolved
  std::string peer_netdev;        // the peer's netdev and its MAC, when read
  std::string peer_mac;
  std::string unknown;  // what could not be read, and why

  friend bool operator==(const ObservedPath&, const ObservedPath&) = default;
};

struct ObservedQp {
  ObservedSource source = ObservedSource::kTrace;
  std::string origin;  // the file it was read from, for messages
  // Who.
  std::string host;
  int pid = 0;
  std::string comm;  // the process's command name
  // Where.
  std::string device;  // "rxe0"
  uint8_t port = 0;    // 0 when unknown
  // What.
  uint32_t qpn = 0;
  std::optional<Transport> transport;  // unset for QP types the judge does not know
  std::string type_name;               // "RC", "UC", "UD", "XRC_INI", ...
  std::string state;                   // the last known state ("" unknown)
  // Trace: the program destroyed it. Snapshot: seen in an earlier sample but
  // gone from the last one (destroyed, or its process exited).
  bool destroyed = false;
  // Addressing, when the source knows it.
  std::optional<uint32_t> dest_qpn;  // rqpn / dest_qp_num (RC, UC)
  // Snapshot: the destination address in the QP's context (its address
  // vector's dgid, or dlid on InfiniBand), when the kernel exposes it (a
  // driver's raw QP context) or the snapshot's writer knew it. A trace's
  // destination is in `applied->ah`.
  std::optional<Gid> dest_gid;
  std::optional<uint16_t> dest_lid;
  // Trace and dump: this side's description (one QP: this one) and the
  // attributes it applied, which the validator judges as a pair.
  HeapOptional<EndpointInfo> endpoint;
  HeapOptional<QpAttrs> applied;
  std::vector<ObservedTransition> transitions;  // trace only, in call order
  // Trace, UD: the address handles the process created on the QP's protection
  // domain (ibv_create_ah), in call order: where its datagrams go. The remote
  // QPN and Q_Key of each send travel in work requests, which no source sees.
  std::vector<AddressVector> address_handles;
  // Trace: the preload first saw this QP at a modify, not at its creation
  // (ibv_create_qp_ex and provider calls do not pass through an interposable
  // symbol; docs/trace.md).
  bool creation_unseen = false;
  // Snapshot: two samples (or one), oldest first.
  std::vector<ObservedSample> samples;
  // Snapshot, a connected RoCE QP: its path facts at the last sample (on the
  // heap: most QPs of a large job have none, and each is kept small).
  HeapOptional<ObservedPath> path;
};

// A port's counters over the snapshot interval (snapshot only).
struct ObservedPortCounters {
  std::string host;
  std::string device;
  uint8_t port = 0;
  // name -> (first sample, second sample): "duplicate_request",
  // "out_of_sequence", "completer_retry_err", "rcvd_rnr_err", "send_rnr_err", ...
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> counters;
  // Seconds between the two samples; 0 when there was one sample (the
  // counters then have no delta to show).
  double interval_seconds = 0;
};

// One port of a host as the host itself names it: what a peer's destination
// address (a dgid, a dlid) can be matched against. A snapshot carries it for
// every port of its host (the host identity, docs/inspect.md).
struct PortIdentity {
  std::string device;
  uint8_t port = 0;
  std::string link_layer;      // "InfiniBand", "Ethernet"; "" when unknown
  uint16_t lid = 0;            // base LID (InfiniBand); 0 on Ethernet or unknown
  uint8_t lmc = 0;             // LIDs lid .. lid + 2^lmc - 1 are the port's
  uint16_t sm_lid = 0;         // the subnet manager's LID (InfiniBand); 0 on Ethernet or unknown
  uint64_t subnet_prefix = 0;  // the upper 64 bits of GID 0; 0 when unknown
  std::vector<Gid> gids;       // the valid entries of the port's GID table, by index

  friend bool operator==(const PortIdentity&, const PortIdentity&) = default;
};

// A host whose snapshot was read: its name, the job the snapshot was taken
// for ("" unknown) and its ports' identities (empty in snapshots written
// before the identity was recorded).
struct ObservedHost {
  std::string name;
  std::string job;
  std::vector<PortIdentity> ports;
};

// Everything read from the given files.
struct Observation {
  std::vector<ObservedQp> qps;
  std::vector<ObservedPortCounters> ports;
  std::vector<ObservedHost> hosts;  // one per snapshot read
  // The job's host list as the launcher gave it (job_hosts.h: Slurm's node
  // list, an mpirun hostfile, pdsh's -w; qp-inspect-mpi's job file), each
  // name once; empty when none was given. A listed host no input names sent
  // no snapshot: the job summary names it (job_summary.h).
  std::vector<std::string> expected_hosts;
  // What the readers noticed about their inputs that is not an error ("a.json:
  // the process ended without an end record (killed?)"), for the report.
  std::vector<std::string> notes;
};

}  // namespace qpconnect
