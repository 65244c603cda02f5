// SPDX-License-Identifier: MIT
// The protocol libqpcm speaks on its out-of-band links (docs/rdmacm.md,
// "The link"): its CM messages (rdmacm/src/wire.h) as the messages of an oob
// message stream (qpconnect/oob/stream_session.h), whose hello names this
// protocol and version; a peer with another version is refused, naming both.
// Constants only, so that every tool's --version prints them without linking
// the library.
//
// Thread-safety: constants.
#pragma once

#include <cstdint>

namespace qpconnect::rdmacm {

inline constexpr char kProtocolName[] = "qpcm";
// 1-3: the library's own framing, HELLO and keys (gone). 4: the oob frame
// (version 2), hello and key schedule; the CM messages of version 3. 5: a
// REQ and a REP carry the traffic class their QP applies (rdma_set_option's
// TOS). 6: a REQ and a REP carry the sender's ECE (vendor id and options:
// rdma_set_local_ece, rdma_get_remote_ece).
inline constexpr uint16_t kProtocolVersion = 6;

}  // namespace qpconnect::rdmacm
