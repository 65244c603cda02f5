// SPDX-License-Identifier: MIT
// MeshComm over MPI (mesh.h): AllToAll is MPI_Alltoall of the sizes then
// MPI_Alltoallv of the bytes; AllGather is MPI_Allgather + MPI_Allgatherv;
// local_rank() comes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
//
//   MPI_Init(&argc, &argv);
//   auto comm = qpconnect::MakeMpiMeshComm(MPI_COMM_WORLD);
//   qpconnect::MeshReport report;
//   auto ok = qpconnect::ConnectMesh(**comm, options, &report);
//
// The communicator is duplicated (MPI_Comm_dup): the mesh's messages never
// mix with the program's. Errors: kIo naming the MPI call and MPI's message.
// Thread-safety: one thread at a time (MPI_THREAD_SINGLE is enough).
#pragma once

#include <mpi.h>

#include <memory>

#include "qpconnect/mesh.h"
#include "qpconnect/result.h"

namespace qpconnect {

// REQUIRES: MPI is initialized, and stays so until the returned object is
// destroyed (it frees its duplicated communicators).
Result<std::unique_ptr<MeshComm>> MakeMpiMeshComm(MPI_Comm comm);

// MakeMpiMeshComm(MPI_COMM_WORLD), for callers that would rather not name
// Open MPI's handle macros (they expand to C casts).
Result<std::unique_ptr<MeshComm>> MakeMpiWorldMeshComm();

}  // namespace qpconnect
