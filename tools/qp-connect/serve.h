// SPDX-License-Identifier: MIT
// qp-connect --serve and --count N: a tcp server that serves peers one after
// another, each with its own exchanger and connector (so every peer's QPs are
// destroyed before the next is accepted), until --count peers have been
// served or SIGINT/SIGTERM arrives.
//
// Thread-safety: one serving loop per process (the signal handlers and the
// out-of-band interrupt flag are process-wide).
#pragma once

#include <functional>
#include <ostream>

#include "options.h"

namespace qpconnect::tools {

// What one peer's run did.
struct PeerOutcome {
  int status = 0;        // the one-peer exit status (tools/common/exit_codes.h)
  bool no_peer = false;  // no peer came before --timeout: not counted, not shown
  bool fatal = false;    // this side cannot serve anyone (usage, no device, bind)
};

// Runs run_peer(k) for k = 1, 2, ... until o.count peers have been served
// (forever without --count), a peer's outcome is fatal, or SIGINT/SIGTERM
// arrives. While it runs, handlers for both signals are installed (the
// previous ones restored after) and every out-of-band wait ends within about
// 100 ms of a signal (oob/interrupt.h: kIo, ECANCELED, the connection kept
// for the abort). Text mode only: prints
// "qp-connect: peer K: failed (exit S); serving the next" on `err` for each
// failed peer, and at the end "qp-connect: served N peer(s), F failed" on
// `out`, or on a signal "qp-connect: SIGINT: stopped serving ..." on `err`.
// Returns 128 + the signal number when interrupted (130 SIGINT, 143
// SIGTERM); else the fatal status; else 0 when every peer succeeded, or the
// first failed peer's status.
// REQUIRES: o.serve.
int ServePeers(const ConnectOptions& o, std::ostream& out, std::ostream& err,
               const std::function<PeerOutcome(unsigned peer)>& run_peer);

// The signal that interrupted the serving (SIGINT or SIGTERM), 0 if none.
int ServeSignal();

// "SIGINT", "SIGTERM".
const char* ServeSignalName(int sig);

// After a signal: lets the out-of-band waits run again; a second signal
// stops them again. (The abort that tells the peer needs it no more: no stop
// cuts an Abort() short, and a wait the signal stopped left the connection
// open for it: docs/oob.md, "Cancelling and interrupting a wait".)
void ResumeWaitsAfterSignal();

}  // namespace qpconnect::tools
