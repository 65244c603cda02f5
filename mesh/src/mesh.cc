// SPDX-License-Identifier: MIT
// ConnectMesh (mesh.h): open per peer, one all-to-all, validate every edge,
// connect, one all-gather per checkpoint, traffic in a global edge order.
#include "qpconnect/mesh.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>

#include "checkpoint.h"
#include "qpconnect/composer.h"
#include "qpconnect/oob/codec.h"
#include "qpconnect/verbs/traffic.h"

namespace qpconnect {
namespace {

using mesh_internal::CheckpointRecord;
using mesh_internal::DecodeCheckpoint;
using mesh_internal::EncodeCheckpoint;

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string LocalHost() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

class MeshRun {
 public:
  MeshRun(MeshComm& comm, const MeshOptions& options, MeshReport* report)
      : comm_(comm), o_(options), r_(*report) {}

  Result<void> Run() {
    r_ = MeshReport{};
    r_.rank = comm_.rank();
    r_.size = comm_.size();
    r_.host = o_.session.host.empty() ? LocalHost() : o_.session.host;
    if (r_.size < 2) {
      return Error(ErrorCode::kInvalidArgument, 0, "mesh", "ranks",
                   "a mesh needs at least 2 ranks; this job has " + std::to_string(r_.size));
    }
    if (o_.traffic_iters > 0 && o_.traffic_size > o_.session.message_size) {
      return Error(ErrorCode::kInvalidArgument, 0, "mesh", "size",
                   "traffic size " + std::to_string(o_.traffic_size) +
                       " exceeds the message size " + std::to_string(o_.session.message_size));
    }
    r_.device = ChooseMeshDevice(o_.devices, comm_.local_rank(), o_.session.device);

    auto start = Clock::now();
    Open();
    r_.open_ms = MsSince(start);

    start = Clock::now();
    QPC_TRY(Exchange());
    r_.exchange_ms = MsSince(start);

    start = Clock::now();
    ValidateEdges();
    r_.validate_ms = MsSince(start);
    QPC_TRY(Checkpoint("validate"));

    start = Clock::now();
    ConnectEdges();
    r_.connect_ms = MsSince(start);
    // Every rank past RTS on every edge, or every rank failing: the barrier
    // before the first send.
    QPC_TRY(Checkpoint("connect"));

    if (o_.traffic_iters > 0) {
      start = Clock::now();
      Traffic();
      r_.traffic_ms = MsSince(start);
      QPC_TRY(Checkpoint("traffic"));
    }
    r_.ok = true;
    return Ok();
  }

 private:
  MeshEdge& EdgeOf(int peer) {
    return r_.edges[static_cast<size_t>(peer < r_.rank ? peer : peer - 1)];
  }

  void Fail(MeshEdge& e, Error error) {
    if (!e.error) e.error = std::move(error);
  }

  void Open() {
    verbs::SessionOptions s = o_.session;
    s.device = r_.device;
    s.host = r_.host;
    if (s.transport == Transport::kUd) s.num_qps = 1;
    for (int p = 0; p < r_.size; ++p) {
      if (p == r_.rank) continue;
      MeshEdge e;
      e.peer = p;
      auto c = Connector::Open(s);
      if (c) {
        e.connector = std::move(*c);
      } else {
        e.error = std::move(c).error();
      }
      r_.edges.push_back(std::move(e));
    }
  }

  // One all-to-all: to each peer the description of the QPs made for it (an
  // empty string when they could not be opened: the peer then fails the edge).
  Result<void> Exchange() {
    std::vector<std::string> out(static_cast<size_t>(r_.size));
    for (MeshEdge& e : r_.edges) {
      if (e.connector) e.connector->Prepare();  // as qp-connect's sides do
      if (e.connector) out[static_cast<size_t>(e.peer)] = oob::EncodeBinary(e.connector->Local());
      r_.bytes_sent += out[static_cast<size_t>(e.peer)].size();
    }
    auto in = comm_.AllToAll(out);
    if (!in) return std::move(in).error();
    if (in->size() != static_cast<size_t>(r_.size)) {
      return Error(ErrorCode::kProtocol, 0, "mesh exchange", "",
                   "the all-to-all returned " + std::to_string(in->size()) + " parts for " +
                       std::to_string(r_.size) + " ranks");
    }
    for (MeshEdge& e : r_.edges) {
      const std::string& bytes = (*in)[static_cast<size_t>(e.peer)];
      r_.bytes_received += bytes.size();
      if (bytes.empty()) {
        Fail(e, Error(ErrorCode::kVerbs, 0, "mesh exchange", "",
                      "rank " + std::to_string(e.peer) + " could not open its QPs for this pair"));
        continue;
      }
      auto remote = oob::DecodeBinary(bytes);
      if (!remote) {
        Error err = std::move(remote).error();
        err.detail = "the description from rank " + std::to_string(e.peer) +
                     " did not decode: " + err.detail;
        Fail(e, std::move(err));
        continue;
      }
      e.peer_host = remote->identity.host;
      e.peer_device = remote->identity.device;
      e.remote = std::move(*remote);
    }
    return Ok();
  }

  // Each edge agreed once (the composer: the joint GID pair, computed alike
  // by both ranks from the two tables, no addresses as the exchange ran over
  // MPI; the path; the plan; the validator), then gated; connected after
  // every rank has passed the validate checkpoint.
  void ValidateEdges() {
    for (MeshEdge& e : r_.edges) {
      if (!e.connector || !e.remote) continue;
      auto agreed = e.connector->Agree(*e.remote, o_.connect);
      e.findings = e.connector->report().findings;
      if (!agreed) {
        Fail(e, std::move(agreed).error());
        continue;
      }
      e.remote = e.connector->report().remote;  // with the agreed GID pair
      if (o_.connect.validate) {
        auto gate = RefuseOnFindings(e.findings);
        if (!gate) Fail(e, std::move(gate).error());
      }
    }
  }

  void ConnectEdges() {
    for (MeshEdge& e : r_.edges) {
      if (e.error || !e.connector || !e.remote) continue;
      const auto start = Clock::now();
      auto done = e.connector->ConnectAgreed(o_.connect);
      e.connect_ms = MsSince(start);
      if (!done) {
        Fail(e, std::move(done).error());
        continue;
      }
      e.connected = true;
    }
  }

  // Edges in one global order (by lower rank, then higher): each rank walks
  // its edges by ascending peer rank, which is that order, so the blocking
  // ping-pongs cannot wait on each other in a cycle. A failed edge does not
  // stop the walk: the later edges' peers are waiting for this rank.
  void Traffic() {
    for (MeshEdge& e : r_.edges) {
      if (!e.connected) continue;
      verbs::Session* session = e.connector->session();
      verbs::TrafficOptions t;
      t.iters = o_.traffic_iters;
      t.size = o_.traffic_size;
      t.timeout = o_.traffic_timeout;
      auto tr = verbs::RunTraffic(
          *session, *e.remote, r_.rank < e.peer ? verbs::Role::kClient : verbs::Role::kServer, t);
      if (!tr) {
        Fail(e, std::move(tr).error());
        continue;
      }
      e.traffic_ok = true;
      e.traffic_seconds = tr->seconds;
    }
  }

  // Every rank tells every other its failed pairs and statistics; any
  // failure anywhere is everyone's failure from here on.
  Result<void> Checkpoint(const char* stage) {
    CheckpointRecord mine;
    for (const MeshEdge& e : r_.edges) {
      if (e.connected) {
        if (r_.rank < e.peer) ++mine.connected;  // each pair once: its lower rank's view
        if (e.connect_ms > mine.slowest_ms) {
          mine.slowest_ms = e.connect_ms;
          mine.slowest_peer = e.peer;
        }
      }
      if (!e.error) continue;
      MeshPairFailure f;
      const bool low = r_.rank < e.peer;
      f.rank_a = low ? r_.rank : e.peer;
      f.rank_b = low ? e.peer : r_.rank;
      f.host_a = low ? r_.host : (e.peer_host.empty() ? "?" : e.peer_host);
      f.host_b = low ? (e.peer_host.empty() ? "?" : e.peer_host) : r_.host;
      f.what = "on rank " + std::to_string(r_.rank) + ": " + e.error->ToString();
      mine.failures.push_back(std::move(f));
      mine.codes.push_back(e.error->code);
    }
    auto all = comm_.AllGather(EncodeCheckpoint(mine));
    if (!all) return std::move(all).error();
    r_.failures.clear();
    std::vector<ErrorCode> codes;
    r_.edges_connected = 0;
    r_.edges_total = static_cast<uint64_t>(r_.size) * static_cast<uint64_t>(r_.size - 1) / 2;
    double slowest = -1;
    for (size_t rank = 0; rank < all->size(); ++rank) {
      const CheckpointRecord c = DecodeCheckpoint((*all)[rank]);
      r_.edges_connected += c.connected;
      if (c.slowest_ms > slowest && c.slowest_peer >= 0) {
        slowest = c.slowest_ms;
        char line[96];
        std::snprintf(line, sizeof line, "rank %zu - rank %d: %.1f ms", rank, c.slowest_peer,
                      c.slowest_ms);
        r_.slowest_edge = line;
      }
      for (size_t i = 0; i < c.failures.size(); ++i) {
        const MeshPairFailure& f = c.failures[i];
        const bool seen = std::any_of(r_.failures.begin(), r_.failures.end(), [&](const auto& g) {
          return g.rank_a == f.rank_a && g.rank_b == f.rank_b;
        });
        if (seen) continue;
        r_.failures.push_back(f);
        codes.push_back(c.codes[i]);
      }
    }
    if (r_.failures.empty()) return Ok();
    const MeshPairFailure& first = r_.failures.front();
    return Error(codes.front(), 0, std::string("mesh ") + stage, "",
                 std::to_string(r_.failures.size()) + " pair(s) failed, the first rank " +
                     std::to_string(first.rank_a) + " (" + first.host_a + ") - rank " +
                     std::to_string(first.rank_b) + " (" + first.host_b +
                     "); every rank gives up (MeshReport::failures says why)");
  }

  MeshComm& comm_;
  const MeshOptions& o_;
  MeshReport& r_;
};

}  // namespace

std::string ChooseMeshDevice(const std::vector<std::string>& devices, int local_rank,
                             const std::string& fallback) {
  if (devices.empty()) return fallback;
  const size_t i = static_cast<size_t>(local_rank < 0 ? 0 : local_rank) % devices.size();
  return devices[i];
}

Result<void> ConnectMesh(MeshComm& comm, const MeshOptions& options, MeshReport* report) {
  MeshRun run(comm, options, report);
  return run.Run();
}

}  // namespace qpconnect
