// SPDX-License-Identifier: MIT
// Description bases on a link (id_part.h): this side's, encoded once per
// described device port and sent once per link; the peer's, decoded once and
// kept in the link's book, each REQ's and REP's description rebuilt from one
// and the message's per-id part.
//
// Thread-safety: REQUIRE library_mutex held (lock.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cm_link.h"
#include "qpconnect/endpoint.h"
#include "qpconnect/result.h"
#include "state.h"
#include "wire.h"

namespace qpconnect::rdmacm {

struct WireBase {
  uint32_t number = 0;
  std::string bytes;
};

// The base of `id`'s description (id->described), encoded the first time.
// kInvalidArgument when the id is not described; kProtocol/kInvalidArgument
// from oob::CheckWireRanges when the base does not fit the wire.
Result<const WireBase*> BaseOf(const Id* id) QPCM_REQUIRES(library_mutex);

// Names `base` in `msg` (with its bytes, the first time `link` carries it)
// and the id's PSN.
void PutBase(Message& msg, const Id* id, const WireBase& base, CmLink& link)
    QPCM_REQUIRES(library_mutex);

// The peer's description from a REQ or REP: its base (`decoded` when the
// message brought one, decoded by the caller; else one the link brought
// before) with the message's per-id part. kProtocol when the base was never
// sent, too many bases came, or the part is out of range.
Result<EndpointInfo> PeerDescription(CmLink& link, const Message& msg,
                                     std::optional<Result<EndpointInfo>>* decoded);

}  // namespace qpconnect::rdmacm
