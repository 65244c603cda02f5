// SPDX-License-Identifier: MIT
// An MPI program gets a connected RC mesh (docs/mesh.md): every rank has one
// QP to every other rank, at RTS, with the peer's description at hand.
//
//   mpirun -np 4 example_mesh_mpi rxe0,rxe1
//
// The first argument lists the devices, assigned round-robin by local rank.
// ConnectMesh proves every edge with a short ping-pong; then each rank prints
// what it has. Exit 0 on every rank, or non-zero on every
// rank with the failed pairs named.
#include <mpi.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "qpconnect/mesh_mpi.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    qpconnect::MeshOptions options;
    std::istringstream devices(argc > 1 ? argv[1] : "");
    for (std::string d; std::getline(devices, d, ',');) options.devices.push_back(d);
    options.session.transport = qpconnect::Transport::kRc;
    options.traffic_iters = 5;  // prove every edge before using it

    auto comm = qpconnect::MakeMpiWorldMeshComm();
    qpconnect::MeshReport mesh;
    auto ok = comm ? qpconnect::ConnectMesh(**comm, options, &mesh) : comm.error();
    if (!ok) {
      std::fprintf(stderr, "rank %d: %s\n", mesh.rank, ok.error().ToString().c_str());
      for (const auto& f : mesh.failures) {
        std::fprintf(stderr, "  pair %d-%d: %s\n", f.rank_a, f.rank_b, f.what.c_str());
      }
      status = 1;
    } else {
      for (const qpconnect::MeshEdge& e : mesh.edges) {
        // The program's data path starts here: e.connector->qp(0) is at RTS,
        // e.remote->qps[0] and its MR describe the peer's side.
        std::printf("rank %d -> rank %d: QP 0x%06x -> 0x%06x on %s, traffic ok\n", mesh.rank,
                    e.peer, e.connector->Local().qps[0].qpn, e.remote->qps[0].qpn,
                    mesh.device.c_str());
      }
    }
  }  // every QP and the mesh's communicators released before MPI_Finalize
  MPI_Finalize();
  return status;
}
