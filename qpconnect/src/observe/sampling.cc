// SPDX-License-Identifier: MIT
#include "qpconnect/observe/sampling.h"

#include <algorithm>
#include <string>
#include <utility>

namespace qpconnect::kernel {

Result<SamplingCounts> TakeSamples(KernelReader& reader, const SamplingPlan& plan,
                                   const SamplingClock& clock, Snapshot* snapshot) {
  SamplingCounts counts;
  const int samples = plan.interval ? 2 : 1;
  // The host identity, once: what peers' destination addresses name.
  if (snapshot->identity.empty()) snapshot->identity = reader.Identity(plan.devices);
  const double start = clock.monotonic_seconds();
  for (int s = 0; s < samples; ++s) {
    if (s > 0) clock.sleep(*plan.interval);
    const double at = clock.monotonic_seconds() - start;
    Result<KernelSample> sample = reader.Sample(plan.devices, &snapshot->notes);
    if (!sample) return sample.error();
    sample->at_seconds = s == 0 ? 0 : at;
    counts.listed = sample->qps.size();
    for (const KernelQp& q : sample->qps) counts.kernel_qps_seen |= q.pid == 0 && !q.comm.empty();
    if (plan.keep) {
      std::erase_if(sample->qps, [&](const KernelQp& q) { return !plan.keep(q); });
    }
    snapshot->samples.push_back(std::move(*sample));
  }

  // The connected RoCE QPs' paths, with the last sample.
  snapshot->paths = reader.Paths(snapshot->samples.back());

  // A user QP without a pid: the kernel withholds it when the owner is
  // outside this PID namespace (or exiting).
  const auto& last_qps = snapshot->samples.back().qps;
  const auto unowned = std::count_if(last_qps.begin(), last_qps.end(), [](const KernelQp& q) {
    return q.pid == 0 && q.comm.empty();
  });
  if (unowned != 0) {
    snapshot->notes.push_back(std::to_string(unowned) +
                              " QP(s) have no pid: the kernel withholds it when the owning "
                              "process is outside this process's PID namespace (a container, "
                              "unshare --pid) or exiting; run qp-inspect in the jobs' PID "
                              "namespace, or the host's, to see their pid and command");
  }
  return counts;
}

}  // namespace qpconnect::kernel
