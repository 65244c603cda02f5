// SPDX-License-Identifier: MIT
#include "qpconnect/sa/peer_path.h"

#include <string>

#include "qpconnect/sa/umad_channel.h"

namespace qpconnect::sa {
namespace {

Error PeerPathError(ErrorCode code, std::string attribute, std::string detail) {
  return Error{code, 0, "SA PathRecord query", std::move(attribute), std::move(detail)};
}

std::string Side(const EndpointInfo& e) {
  return (e.identity.host.empty() ? std::string("?") : e.identity.host) + " " + e.identity.device +
         " port " + std::to_string(e.port.port_num);
}

}  // namespace

Result<PathQuery> PeerPathQuery(const EndpointInfo& local, const EndpointInfo& remote,
                                const PeerPathOptions& options) {
  for (const EndpointInfo* e : {&local, &remote}) {
    if (e->port.link_layer == LinkLayer::kEthernet) {
      return PeerPathError(ErrorCode::kIncompatible, "link_layer",
                           Side(*e) +
                               " is Ethernet (RoCE): it has no subnet administrator; "
                               "paths come from the GID and the IP route there (drop "
                               "--path sa)");
    }
  }
  PathQuery query;
  const bool same_subnet = local.port.subnet_prefix == 0 || remote.port.subnet_prefix == 0 ||
                           local.port.subnet_prefix == remote.port.subnet_prefix;
  if (remote.port.lid != 0 && (same_subnet || !remote.path.sgid)) {
    query.dlid = static_cast<uint16_t>(remote.port.lid | remote.path.src_path_bits);
  } else if (remote.path.sgid) {
    query.dgid = remote.path.sgid->gid;
  } else {
    return PeerPathError(ErrorCode::kInvalidArgument, "lid",
                         "the peer (" + Side(remote) +
                             ") published neither a LID nor a GID to ask the SA a path to");
  }
  query.pkey = local.keys.pkey;
  query.sl = options.sl;
  return query;
}

Result<PathRecord> ResolvePeerPath(const EndpointInfo& local, const EndpointInfo& remote,
                                   const PeerPathOptions& options) {
  auto query = PeerPathQuery(local, remote, options);
  if (!query) return std::move(query).error();
  auto port = QueryUmadPort(local.identity.device, local.port.port_num);
  if (!port) return std::move(port).error();
  auto channel = OpenUmadChannel(*port);
  if (!channel) return std::move(channel).error();
  return ResolvePath(**channel, *port, *query, options.resolve);
}

}  // namespace qpconnect::sa
