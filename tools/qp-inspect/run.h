// SPDX-License-Identifier: MIT
// qp-inspect: every QP on this host as the kernel's RDMA resource tracker sees
// it (what `rdma res show qp` lists), with each owner's process state and the
// ports' counters; optionally two samples an interval apart, written as a
// snapshot file for qp-validate (docs/inspect.md).
//
//   qp-inspect [-d DEV[,DEV...]] [--pid PID[,PID...]] [--comm NAME[,NAME...]] [--json]
//              [-o FILE] [--interval SECONDS] [--at TIME] [--host NAME]
//   qp-inspect-mpi [the same] [--hosts LIST] [--hostfile FILE] -o FILE
//
// Whole-job collection (docs/inspect.md): `--at TIME` takes the first sample
// at an agreed wall-clock time (one qp-inspect per node under srun or pdsh,
// each writing its own file, `-o DIR/%h.json`); qp-inspect-mpi (built with
// MPI) runs the same over a Job channel: a barrier before each sample, every
// rank's snapshot gathered to rank 0 into one job file, with the job's host
// list (--hosts, --hostfile, else Slurm's SLURM_JOB_NODELIST) so that
// qp-validate names a host that sent nothing.
//
// Exit status (tools/common/exit_codes.h): 0 listed (also when nothing
// matches: a message on stderr says so), 2 usage or an unwritable -o file,
// 3 no RDMA netlink, no device or no such device, 4 (qp-inspect-mpi) a barrier
// or the gather failed, 6 a kernel query failed.
//
// Thread-safety: Run*() touch no global state besides the streams and the
// environment they are given.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "qpconnect/observe/netlink.h"

namespace qpconnect::tools::inspect {

// The collective channel of qp-inspect-mpi (an MPI job); absent otherwise.
struct Job {
  int rank = 0;
  int size = 1;
  int local_rank = 0;             // among the ranks on this node: picks its device
  std::function<bool()> barrier;  // every rank: false when the channel failed
  // Every rank passes its snapshot text; rank 0 gets all of them by rank, the
  // others an empty vector; nullopt when the channel failed.
  std::function<std::optional<std::vector<std::string>>(const std::string&)> gather;
};

// What Run() reads the world through; tests pass fakes.
struct Environment {
  kernel::KernelReader* reader = nullptr;     // REQUIRED
  std::function<double()> monotonic_seconds;  // a steady clock
  std::function<void(double seconds)> sleep;  // waits between samples
  std::function<std::string()> hostname;      // this host's name
  std::function<std::string()> utc_now;       // "2026-11-23T05:20:00Z"
  std::function<double()> wall_seconds;       // the wall clock: seconds since the epoch
  const Job* job = nullptr;                   // qp-inspect-mpi's channel
  // An environment variable's value ("" unset); unset function: none is read.
  std::function<std::string(const char* name)> getenv;
};

// The environment of a real run: netlink, the steady clock, sleep, uname.
Environment RealEnvironment(kernel::KernelReader* reader);

// Runs qp-inspect with `args` (argv without argv[0]); returns the exit status.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int Run(const std::vector<std::string>& args, const Environment& env, std::ostream& out,
        std::ostream& err);

}  // namespace qpconnect::tools::inspect
