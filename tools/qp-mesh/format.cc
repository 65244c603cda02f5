// SPDX-License-Identifier: MIT
#include "format.h"

#include <cstdio>
#include <string>
#include <utility>

#include "json_document.h"
#include "qpconnect/diagnostic.h"

namespace qpconnect::tools {
namespace {

std::string EdgeState(const MeshEdge& e, bool traffic) {
  if (e.error) return "FAILED: " + e.error->ToString();
  if (!e.connected) return "not connected (the mesh failed on another pair)";
  if (!traffic) return "connected";
  return e.traffic_ok ? "connected, traffic ok" : "connected, traffic not run";
}

}  // namespace

std::string MeshReportText(const MeshReport& r, const MeshOptions& o, const Result<void>& verdict) {
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
      if (f.severity == Severity::kError && r.rank < e.peer) {
        out += "qp-mesh:     " + FindingToString(f) + "\n";
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

std::string MeshReportJson(const MeshReport& r, const Result<void>& verdict) {
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
    for (const auto& f : e.findings) errors += f.severity == Severity::kError;
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

}  // namespace qpconnect::tools
