// SPDX-License-Identifier: MIT
// A snapshot's QPs given the destinations their processes published
// (qpconnect/peer_registry.h): the toolkit's own programs (qp-connect, the
// C++ and C API, libqpcm, qp-mesh) publish each connected QP's peer, so that
// qp-inspect gives those QPs a destination (dgid, dlid) where the kernel
// shows none, and qp-validate pairs them by address (docs/inspect.md
// "Published peers").
//
// Thread-safety: reads files only; the snapshot is the caller's.
#pragma once

#include <string>

#include "qpconnect/observe/snapshot.h"

namespace qpconnect::kernel {

struct PublishedPeersOptions {
  std::string dir;                  // "": each process's uid's own (PeersDir)
  std::string proc_root = "/proc";  // where the processes' uids and start times are read
};

// For every process owning a QP in `snapshot`'s samples, reads the peers it
// published (ReadPublishedPeers: a file of a dead process, of a reused pid,
// of another owner, or garbled is ignored, with a note) and, for each of its
// QPs (by device and QPN) without a destination from the kernel (no dgid and
// no dlid), sets dgid (the published GID) and dlid (the published LID when
// not 0) and dest_source "published". A kernel's destination always wins. A
// published entry that contradicts the QP is stale (the QPN was reused) and
// is not used: the QP is not past INIT (RTR, RTS, SQD, SQE, ERR), or the
// kernel's rqpn differs from the published peer QPN. Notes (one per file,
// and how many QPs got a destination this way) go to snapshot->notes.
// Returns how many QPs of the last sample got one.
size_t AddPublishedPeers(Snapshot* snapshot, const PublishedPeersOptions& options = {});

}  // namespace qpconnect::kernel
