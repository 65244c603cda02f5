// SPDX-License-Identifier: MIT
// The path between two exchanged endpoints, asked of the InfiniBand subnet
// administrator: what the connector's path source (ConnectorOptions::
// path_source, qp-connect --path sa) calls, as rdma_cm resolves a route.
// Needs libibumad only.
#pragma once

#include <cstdint>
#include <optional>

#include "qpconnect/endpoint.h"
#include "qpconnect/path_record.h"
#include "qpconnect/result.h"
#include "qpconnect/sa/path_resolver.h"

namespace qpconnect::sa {

struct PeerPathOptions {
  std::optional<uint8_t> sl;  // ask for this SL (qp-connect --sl); unset: the SA picks
  ResolveOptions resolve;     // deadline and retries of the query
};

// The query for the path from `local`'s port to `remote`'s:
//   destination  remote's LID (base | its src_path_bits) when both ports are
//                in one subnet (equal subnet prefixes, or either unknown);
//                remote's GID when the prefixes differ (across routers), or
//                when the peer has no LID
//   P_Key        local.keys.pkey, the partition this side's QPs use
//   SL           options.sl when given
// Errors: kIncompatible "link_layer" when either side is Ethernet (RoCE has
// no SA); kInvalidArgument "lid" when the peer published neither a LID nor a
// GID.
Result<PathQuery> PeerPathQuery(const EndpointInfo& local, const EndpointInfo& remote,
                                const PeerPathOptions& options = {});

// Asks the SA (through libibumad, on local.identity.device, port
// local.port.port_num) for PeerPathQuery's path. Errors: PeerPathQuery's,
// QueryUmadPort's and OpenUmadChannel's (kNotFound, kIo), and ResolvePath's
// (no SM, timeout, no path, partition refused).
Result<PathRecord> ResolvePeerPath(const EndpointInfo& local, const EndpointInfo& remote,
                                   const PeerPathOptions& options = {});

}  // namespace qpconnect::sa
