// SPDX-License-Identifier: MIT
#include "run.h"

#include <mpi.h>

#include "exit_codes.h"
#include "format.h"
#include "options.h"
#include "qpconnect/mesh_mpi.h"
#include "usage.h"
#include "version.h"

namespace qpconnect::tools {
namespace {

// The mesh over MPI_COMM_WORLD: this rank's report written in one write.
// The mesh's communicators are freed on return, before MPI_Finalize.
// REQUIRES: MPI initialized.
int ConnectWorld(const MeshCliOptions& o, std::ostream& out, std::ostream& err) {
  auto comm = MakeMpiWorldMeshComm();
  if (!comm) {
    err << "qp-mesh: " << comm.error().ToString() << "\n";
    return ExitStatus(ExitStage::kExchange, comm.error());
  }
  MeshReport report;
  auto verdict = ConnectMesh(**comm, o.mesh, &report);
  const std::string text =
      o.json ? MeshReportJson(report, verdict) : MeshReportText(report, o.mesh, verdict);
  std::ostream& to = verdict || o.json ? out : err;
  to.write(text.data(), static_cast<std::streamsize>(text.size()));
  to.flush();
  return verdict ? kExitOk : ExitStatus(ExitStage::kWhole, verdict.error());
}

}  // namespace

int RunQpMesh(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = ParseMeshOptions(args);
  if (!parsed) return UsageError("qp-mesh", err, parsed.error().ToString());
  if (parsed->help) {
    out << MeshHelpText();
    return kExitOk;
  }
  if (parsed->version) {
    out << VersionText("qp-mesh");
    return kExitOk;
  }
  PrintNotes("qp-mesh", parsed->notes, err);
  MPI_Init(nullptr, nullptr);
  const int status = ConnectWorld(*parsed, out, err);
  MPI_Finalize();
  return status;
}

}  // namespace qpconnect::tools
