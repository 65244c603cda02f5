// SPDX-License-Identifier: MIT
#include "qpconnect/observe/published_peers.h"

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "qpconnect/peer_registry.h"

namespace qpconnect::kernel {
namespace {

bool PastInit(const std::string& state) {
  return state == "RTR" || state == "RTS" || state == "SQD" || state == "SQE" || state == "ERR";
}

}  // namespace

size_t AddPublishedPeers(Snapshot* snapshot, const PublishedPeersOptions& options) {
  std::set<int> pids;
  for (const KernelSample& s : snapshot->samples) {
    for (const KernelQp& q : s.qps) {
      if (q.pid > 0) pids.insert(q.pid);
    }
  }
  // (pid, device, qpn) -> the published peer
  std::map<std::tuple<int, std::string, uint32_t>, PublishedPeer> published;
  size_t denied = 0;
  for (int pid : pids) {
    PublishedPeersOfProcess p = ReadPublishedPeers(pid, options.dir, options.proc_root);
    if (p.denied) {
      ++denied;
    } else if (p.note) {
      snapshot->notes.push_back("published peers: " + *p.note);
    }
    for (PublishedPeer& peer : p.peers) {
      published.emplace(std::make_tuple(pid, peer.device, peer.qpn), std::move(peer));
    }
  }
  if (denied != 0) {
    snapshot->notes.push_back("published peers: the files of " + std::to_string(denied) +
                              " process(es) are not readable by this user (run as root or as "
                              "their user to use them)");
  }
  if (published.empty()) return 0;
  size_t filled = 0, stale = 0;
  for (size_t i = 0; i < snapshot->samples.size(); ++i) {
    const bool last = i + 1 == snapshot->samples.size();
    for (KernelQp& q : snapshot->samples[i].qps) {
      auto it = published.find(std::make_tuple(q.pid, q.device, q.lqpn));
      if (it == published.end() || q.dgid || q.dlid) continue;
      const PublishedPeer& peer = it->second;
      const bool connected_type = q.type == "RC" || q.type == "UC";
      if ((connected_type && !PastInit(q.state)) ||
          (connected_type && q.rqpn && *q.rqpn != 0 && *q.rqpn != peer.peer_qpn)) {
        stale += last ? 1 : 0;
        continue;
      }
      if (!peer.peer_gid && peer.peer_lid == 0) continue;
      q.dgid = peer.peer_gid;
      if (peer.peer_lid != 0) q.dlid = peer.peer_lid;
      q.dest_source = "published";
      filled += last ? 1 : 0;
    }
  }
  snapshot->notes.push_back(
      "published peers: " + std::to_string(filled) +
      " QP(s) given the destination their process published (the kernel shows none)" +
      (stale != 0 ? "; " + std::to_string(stale) +
                        " published entr(ies) not used: they contradict the QP (a reused QPN)"
                  : std::string()));
  return filled;
}

}  // namespace qpconnect::kernel
