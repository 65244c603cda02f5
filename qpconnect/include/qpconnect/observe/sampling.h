// SPDX-License-Identifier: MIT
// Sampling the kernel into a snapshot (snapshot.h), as qp-inspect does: one
// sample of every QP and port counter of some devices through a KernelReader
// (netlink.h), or two an interval apart so that moving and stuck QPs can be
// told apart, keeping the QPs a filter accepts.
//
// Thread-safety: as the reader; the clock's functions are called from the
// calling thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "qpconnect/observe/netlink.h"
#include "qpconnect/observe/snapshot.h"
#include "qpconnect/result.h"

namespace qpconnect::kernel {

struct SamplingPlan {
  std::vector<NlDevice> devices;   // read every QP and port of these
  std::optional<double> interval;  // seconds between two samples; unset: one sample
  // Which QPs a sample keeps (by pid, command, ...); all when empty.
  std::function<bool(const KernelQp&)> keep;
};

// The time a sampling waits on, injected so that tests need not wait.
struct SamplingClock {
  std::function<double()> monotonic_seconds;  // a steady clock
  std::function<void(double seconds)> sleep;  // waits between samples
};

// What the kernel listed before the plan's filter, for the caller's messages.
struct SamplingCounts {
  size_t listed = 0;             // QPs of the last sample, kept or not
  bool kernel_qps_seen = false;  // a kernel QP (pid 0 with an owner, e.g. QP1) was listed
};

// Sets snapshot->identity from the reader (the ports of the plan's devices)
// unless the caller set it. Appends the plan's samples to snapshot->samples
// (the first at 0 s, the second at the seconds since the first), sets
// snapshot->paths from the reader's Paths() of the last sample, and what the
// reader could not see
// to snapshot->notes, with a note when QPs of the last sample have no pid
// (their owner is outside this PID namespace, or exiting). The snapshot's
// host, tool and time are the caller's to set. Errors: the reader's
// (kNotFound, kIo); the samples taken before one failed are kept.
// REQUIRES: clock's functions are set.
Result<SamplingCounts> TakeSamples(KernelReader& reader, const SamplingPlan& plan,
                                   const SamplingClock& clock, Snapshot* snapshot);

}  // namespace qpconnect::kernel
