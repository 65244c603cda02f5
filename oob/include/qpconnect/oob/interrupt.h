// SPDX-License-Identifier: MIT
// A process-wide interrupt for the out-of-band waits: a program that handles
// SIGINT/SIGTERM (qp-connect --serve) points it at a flag its handler sets,
// and every wait of the tcp, stdio, file and channel exchangers and of the
// pingpong channel (accept, connect, read, write, the barrier) then ends
// within about kInterruptPoll of the flag becoming true (the file exchanger:
// within its poll_interval). It is one source of the same stop as
// Exchanger::Cancel() (exchanger.h), for every exchanger at once: the
// exchangers fail with kIo, errno ECANCELED, "interrupted (...)"
// (IsCancelled()), and keep the channel open, so that the caller's Abort()
// (which no stop cuts short) can still tell the peer why. Unlike Cancel(),
// the flag sends no abort by itself and is not final: it is the caller's to
// clear. The pingpong channel ends as its deadline would (kTimeout).
//
// Thread-safety: SetInterruptFlag() before the waits start; the flag itself
// may be set from a signal handler (a lock-free std::atomic<bool>).
#pragma once

#include <atomic>
#include <chrono>

namespace qpconnect::oob {

// How often a wait looks at the flag while nothing else happens.
inline constexpr std::chrono::milliseconds kInterruptPoll{100};

// `flag`: checked by every wait while non-null; nullptr (the default) turns
// the check off. The flag must outlive the waits.
void SetInterruptFlag(const std::atomic<bool>* flag);

// True when a flag is set and holds true.
bool Interrupted();

}  // namespace qpconnect::oob
