// A process-wide interrupt for the out-of-band waits: a program that handles
// SIGINT/SIGTERM (qp-connect --serve) points it at a flag its handler sets,
// and every wait of the tcp, stdio and pingpong channels (accept, connect,
// read, write, the barrier) then ends within about kInterruptPoll of the flag
// becoming true, as its deadline would have (kTimeout, "... before the
// deadline"): the caller checks the flag to tell the two apart.
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
