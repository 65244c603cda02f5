// SPDX-License-Identifier: MIT
// qp-inspect-mpi: qp-inspect run by every rank of an MPI job (mpirun, srun
// --mpi): a barrier before each sample, so that the ranks sample together,
// and every rank's snapshot gathered to rank 0, which writes them into one
// job file (-o FILE) for qp-validate. Built only when MPI is found, like
// qp-mesh; qp-inspect itself never links MPI.
#include <mpi.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "run.h"
#include "stderr_log.h"

// Open MPI's handle macros (MPI_COMM_WORLD, MPI_CHAR, ...) are C casts.
#pragma GCC diagnostic ignored "-Wold-style-cast"

namespace {

std::optional<std::vector<std::string>> GatherToRoot(MPI_Comm comm, int rank, int size,
                                                     const std::string& mine) {
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
  if (MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm) != MPI_SUCCESS) {
    return std::nullopt;
  }
  long total = 0;
  for (int i = 0; rank == 0 && i < size; ++i) {
    offsets[static_cast<size_t>(i)] = static_cast<int>(total);
    total += counts[static_cast<size_t>(i)];
  }
  if (total > 0x7fffffff) return std::nullopt;  // MPI counts are int
  std::string all(static_cast<size_t>(total), '\0');
  if (MPI_Gatherv(mine.data(), count, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR,
                  0, comm) != MPI_SUCCESS) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (int i = 0; rank == 0 && i < size; ++i) {
    out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(i)]),
                             static_cast<size_t>(counts[static_cast<size_t>(i)])));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  qpconnect::tools::InstallStderrLog("qp-inspect-mpi");
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_NULL, local = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  qpconnect::tools::inspect::Job job;
  MPI_Comm_rank(comm, &job.rank);
  MPI_Comm_size(comm, &job.size);
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, job.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &job.local_rank);
  job.barrier = [&] { return MPI_Barrier(comm) == MPI_SUCCESS; };
  job.gather = [&](const std::string& mine) {
    return GatherToRoot(comm, job.rank, job.size, mine);
  };

  std::unique_ptr<qpconnect::kernel::KernelReader> reader = qpconnect::kernel::MakeNetlinkReader();
  qpconnect::tools::inspect::Environment env =
      qpconnect::tools::inspect::RealEnvironment(reader.get());
  env.job = &job;
  const int rc = qpconnect::tools::inspect::Run(std::vector<std::string>(argv + 1, argv + argc),
                                                env, std::cout, std::cerr);
  MPI_Comm_free(&local);
  MPI_Comm_free(&comm);
  // A rank that failed before the collectives would leave the others waiting:
  // abort the job instead, with its status.
  if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);
  MPI_Finalize();
  return rc;
}
