// qp-mesh: an all-to-all RDMA QP mesh over MPI (docs/mesh.md). Every rank
// prints its own report in one write (text or one JSON line); rank 0 adds the
// mesh summary. Every rank exits with the same status (mesh.h: the verdict is
// collective).
#include <mpi.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "json_document.h"
#include "options.h"
#include "qpconnect/mesh_mpi.h"
#include "version.h"

namespace {

using qpconnect::ErrorCode;
using qpconnect::MeshReport;
using namespace qpconnect::tools;

int ExitFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return kExitUsage;
    case ErrorCode::kNotFound:
      return kExitNoDevice;
    case ErrorCode::kIncompatible:
      return kExitValidation;
    case ErrorCode::kTraffic:
    case ErrorCode::kTimeout:
      return kExitTraffic;
    case ErrorCode::kVerbs:
      return kExitVerbs;
    case ErrorCode::kProtocol:
    case ErrorCode::kIo:
    case ErrorCode::kAuth:
      return kExitExchange;
  }
  return kExitVerbs;
}

std::string EdgeState(const qpconnect::MeshEdge& e, bool traffic) {
  if (e.error) return "FAILED: " + e.error->ToString();
  if (!e.connected) return "not connected (the mesh failed on another pair)";
  if (!traffic) return "connected";
  return e.traffic_ok ? "connected, traffic ok" : "connected, traffic not run";
}

std::string Text(const MeshReport& r, const qpconnect::MeshOptions& o,
                 const qpconnect::Result<void>& verdict) {
  const bool traffic = o.traffic_iters > 0;
  char line[512];
  std::string out;
  std::snprintf(
      line, sizeof line,
      "qp-mesh: rank %d/%d on %s (%s): %zu edge(s); exchange %llu bytes sent, %llu "
      "received; open %.1f ms, exchange %.1f ms, validate %.1f ms, connect %.1f ms%s\n",
      r.rank, r.size, r.host.c_str(), r.device.empty() ? "first device" : r.device.c_str(),
      r.edges.size(), static_cast<unsigned long long>(r.bytes_sent),
      static_cast<unsigned long long>(r.bytes_received), r.open_ms, r.exchange_ms, r.validate_ms,
      r.connect_ms,
      traffic ? (", traffic " + std::to_string(static_cast<int>(r.traffic_ms)) + " ms").c_str()
              : "");
  out += line;
  for (const auto& e : r.edges) {
    std::snprintf(line, sizeof line, "qp-mesh:   rank %d -> rank %d (%s %s): %s\n", r.rank, e.peer,
                  e.peer_host.empty() ? "?" : e.peer_host.c_str(),
                  e.peer_device.empty() ? "?" : e.peer_device.c_str(),
                  EdgeState(e, traffic).c_str());
    out += line;
    for (const auto& f : e.findings) {
      if (f.severity == qpconnect::Severity::kError && r.rank < e.peer) {
        out += "qp-mesh:     " + qpconnect::FindingToString(f) + "\n";
      }
    }
  }
  if (r.rank == 0) {
    std::snprintf(line, sizeof line,
                  "qp-mesh: mesh of %d ranks: %llu of %llu pair(s) connected%s; slowest edge %s\n",
                  r.size, static_cast<unsigned long long>(r.edges_connected),
                  static_cast<unsigned long long>(r.edges_total),
                  traffic && r.ok ? ", traffic ok on every edge" : "",
                  r.slowest_edge.empty() ? "-" : r.slowest_edge.c_str());
    out += line;
    for (const auto& f : r.failures) {
      out += "qp-mesh: FAILED pair rank " + std::to_string(f.rank_a) + " (" + f.host_a +
             ") - rank " + std::to_string(f.rank_b) + " (" + f.host_b + "): " + f.what + "\n";
    }
  }
  if (!verdict)
    out += "qp-mesh: rank " + std::to_string(r.rank) + ": " + verdict.error().ToString() + "\n";
  return out;
}

std::string Json(const MeshReport& r, const qpconnect::Result<void>& verdict) {
  nlohmann::ordered_json j = JsonDocument();
  j["rank"] = r.rank;
  j["size"] = r.size;
  j["host"] = r.host;
  j["device"] = r.device;
  j["ok"] = r.ok;
  j["exchange"] = {{"bytes_sent", r.bytes_sent}, {"bytes_received", r.bytes_received}};
  j["timings_ms"] = {{"open", r.open_ms},
                     {"exchange", r.exchange_ms},
                     {"validate", r.validate_ms},
                     {"connect", r.connect_ms},
                     {"traffic", r.traffic_ms}};
  j["peers"] = nlohmann::json::array();
  for (const auto& e : r.edges) {
    nlohmann::ordered_json p = {{"rank", e.peer},
                                {"host", e.peer_host},
                                {"device", e.peer_device},
                                {"connected", e.connected},
                                {"traffic_ok", e.traffic_ok},
                                {"connect_ms", e.connect_ms},
                                {"errors", 0}};
    int errors = 0;
    for (const auto& f : e.findings) errors += f.severity == qpconnect::Severity::kError;
    p["errors"] = errors;
    if (e.error) p["error"] = ErrorObject(*e.error);
    j["peers"].push_back(std::move(p));
  }
  if (r.rank == 0) {
    nlohmann::ordered_json s = {{"pairs", r.edges_total},
                                {"pairs_connected", r.edges_connected},
                                {"slowest_edge", r.slowest_edge},
                                {"failures", nlohmann::json::array()}};
    for (const auto& f : r.failures) {
      s["failures"].push_back({{"rank_a", f.rank_a},
                               {"rank_b", f.rank_b},
                               {"host_a", f.host_a},
                               {"host_b", f.host_b},
                               {"what", f.what}});
    }
    j["mesh"] = std::move(s);
  }
  if (!verdict) j["error"] = ErrorObject(verdict.error());
  return j.dump() + "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ParseMeshOptions(args);
  if (!parsed) {
    std::cerr << "qp-mesh: " << parsed.error().ToString() << "\nTry 'qp-mesh --help'.\n";
    return kExitUsage;
  }
  if (parsed->help) {
    std::cout << MeshHelpText();
    return kExitOk;
  }
  if (parsed->version) {
    std::cout << VersionText("qp-mesh");
    return kExitOk;
  }
  MPI_Init(&argc, &argv);
  int status = kExitOk;
  {
    auto comm = qpconnect::MakeMpiWorldMeshComm();
    if (!comm) {
      std::cerr << "qp-mesh: " << comm.error().ToString() << "\n";
      status = kExitExchange;
    } else {
      MeshReport report;
      auto verdict = qpconnect::ConnectMesh(**comm, parsed->mesh, &report);
      const std::string text =
          parsed->json ? Json(report, verdict) : Text(report, parsed->mesh, verdict);
      std::fwrite(text.data(), 1, text.size(), verdict || parsed->json ? stdout : stderr);
      std::fflush(nullptr);
      if (!verdict) status = ExitFor(verdict.error().code);
    }
  }  // the mesh's communicators freed before MPI_Finalize
  MPI_Finalize();
  return status;
}
