// SPDX-License-Identifier: MIT
// An all-to-all QP mesh: every process (rank) of a job connects `qps` QPs to
// every other rank, over a collective channel the job already has (MPI, or
// anything that implements MeshComm), with one collective for the whole
// exchange.
//
//   ConnectMesh(comm, options):
//     1. open: one Connector per peer rank (owning mode: its QPs, CQs and
//        buffers), on the device this rank is given (ChooseMeshDevice)
//     2. exchange: ONE all-to-all: rank r sends rank p the description of
//        the QPs it made for p (oob codec, binary), and receives p's for r
//     3. validate: every edge planned and validated before any modify; the
//        error findings of all ranks are gathered (one all-gather), so that
//        a bad description on one rank makes EVERY rank fail (kIncompatible)
//        naming the pair, its ranks and hosts
//     4. connect: each edge INIT->RTR->RTS; then one all-reduce, which is
//        also the barrier before the first send (every rank at RTS)
//     5. traffic (optional): every edge proved by a ping-pong (verbs/traffic.h),
//        edges taken in one global order (lower rank sends first), so the
//        blocking ping-pongs cannot deadlock; one all-reduce says whether
//        every edge passed on every rank.
//   Each step that can fail on one rank ends with a collective every rank
//   joins, so a failure is every rank's failure, never a hang.
//
// Transports: RC and UC (qps QPs per peer); UD: one Connector of one QP per
// peer (not one QP addressing all peers).
//
// Thread-safety: one thread per rank; the MeshComm is used by one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qpconnect/connector.h"
#include "qpconnect/diagnostic.h"
#include "qpconnect/result.h"
#include "qpconnect/verbs/session.h"

namespace qpconnect {

// What the mesh needs of the job's collective channel. Every call is
// collective: every rank calls it, in the same order. Errors: kIo (the
// channel failed), kProtocol (inconsistent sizes).
class MeshComm {
 public:
  virtual ~MeshComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the ranks on this host (0..), for device choice.
  virtual int local_rank() const = 0;
  // to_each[p] is sent to rank p (to_each.size() == size()); returns what
  // each rank sent to this one (result[p] from rank p; [rank()] is ours).
  virtual Result<std::vector<std::string>> AllToAll(const std::vector<std::string>& to_each) = 0;
  // Every rank's `mine`, by rank.
  virtual Result<std::vector<std::string>> AllGather(const std::string& mine) = 0;
};

// Device choice per rank, as HPC users expect (NCCL_IB_HCA, UCX_NET_DEVICES):
// `devices` is a list assigned round-robin by local rank; empty: `fallback`
// (empty fallback: the first device). Returns the device name ("" = first).
std::string ChooseMeshDevice(const std::vector<std::string>& devices, int local_rank,
                             const std::string& fallback);

struct MeshOptions {
  // Per edge: transport, QPs per peer (num_qps; UD: 1), port, GID, sizes.
  // `device` is replaced by ChooseMeshDevice(devices, local rank, device).
  verbs::SessionOptions session;
  std::vector<std::string> devices;
  ConnectorOptions connect;  // plan options, validate gate; timeout per edge
  // Prove every edge with a ping-pong of this many iterations (0: no traffic).
  uint32_t traffic_iters = 10;
  uint32_t traffic_size = 4096;  // REQUIRES: <= session.message_size
  std::chrono::milliseconds traffic_timeout{10000};
};

// One edge as this rank sees it.
struct MeshEdge {
  int peer = -1;          // the peer's rank
  std::string peer_host;  // from its description
  std::string peer_device;
  std::unique_ptr<Connector> connector;  // this rank's side (null if it failed to open)
  std::optional<EndpointInfo> remote;    // the peer's description, once decoded
  std::vector<Finding> findings;         // the validator's, this rank's view
  std::optional<Error> error;            // what failed on this edge, if anything
  bool connected = false;                // at RTS
  bool traffic_ok = false;               // the ping-pong passed
  double traffic_seconds = 0;
  double connect_ms = 0;  // RTR+RTS of this edge's QPs
};

// A pair with an error, as gathered from every rank (each pair once: the
// lower rank's view).
struct MeshPairFailure {
  int rank_a = -1, rank_b = -1;
  std::string host_a, host_b;
  std::string what;  // the first error finding or the error, one line
};

struct MeshReport {
  int rank = -1, size = 0;
  std::string device;  // chosen for this rank
  std::string host;
  std::vector<MeshEdge> edges;                  // by peer rank, this rank excluded
  std::vector<MeshPairFailure> failures;        // the whole mesh's (every rank has them all)
  uint64_t bytes_sent = 0, bytes_received = 0;  // in the exchange, this rank
  double open_ms = 0, exchange_ms = 0, validate_ms = 0, connect_ms = 0, traffic_ms = 0;
  std::string slowest_edge;  // "rank 0 - rank 3: 12.3 ms" (connect), from every rank's edges
  uint64_t edges_total = 0, edges_connected = 0;  // the whole mesh's (pairs)
  bool ok = false;  // every edge of every rank connected (and passed traffic)
};

// Runs the flow above; `*report` holds what was learned, also on failure.
// Every rank returns the same verdict:
//   kIncompatible  a pair failed validation (report->failures names each)
//   kVerbs         a pair failed to open or connect on some rank (named)
//   kTraffic       a pair failed its ping-pong (named)
//   kProtocol      a peer's description did not decode (named)
//   kIo            the collective channel failed
//   kInvalidArgument  fewer than 2 ranks, or traffic_size > message_size
// The error's detail names the first failing pair and how many there are.
// REQUIRES: report != nullptr.
Result<void> ConnectMesh(MeshComm& comm, const MeshOptions& options, MeshReport* report);

}  // namespace qpconnect
