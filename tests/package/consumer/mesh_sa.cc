// SPDX-License-Identifier: MIT
// The installed qpconnect::sa and qpconnect::mesh (and qpconnect::mesh_mpi
// when the package was built with MPI) compile and link for an embedding
// program. Runs without RDMA or MPI: only pure functions are called.
#include <qpconnect/mesh.h>
#include <qpconnect/sa/path_resolver.h>
#ifdef HAVE_MESH_MPI
#include <qpconnect/mesh_mpi.h>
#endif

#include <iostream>

int main() {
  auto q = qpconnect::sa::ParseDestination("0x12");
  const std::string dev = qpconnect::ChooseMeshDevice({"mlx5_0", "mlx5_1"}, 3, "");
  std::cout << "dlid " << (q && q->dlid ? *q->dlid : 0) << ", device " << dev << "\n";
  return q && q->dlid && *q->dlid == 0x12 && dev == "mlx5_1" ? 0 : 1;
}
