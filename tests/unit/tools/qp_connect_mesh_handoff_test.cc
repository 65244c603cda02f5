// SPDX-License-Identifier: MIT
// qp-connect --oob mpi hands over to qp-mesh (tools/qp-connect/mesh_handoff.h).
#include "mesh_handoff.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <sstream>

#include "exit_codes.h"
#include "run.h"

namespace qpconnect::tools {
namespace {

using Args = std::vector<std::string>;

TEST(MeshHandoff, OnlyOobMpiHandsOverAndTheOptionIsDropped) {
  EXPECT_FALSE(MeshArgs({"-d", "rxe0", "--oob", "tcp"}).has_value());
  EXPECT_FALSE(MeshArgs({}).has_value());
  auto a = MeshArgs({"--oob", "mpi", "--devices", "rxe0,rxe1", "-q", "2"});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, (Args{"--devices", "rxe0,rxe1", "-q", "2"}));
  auto b = MeshArgs({"-t", "ud", "--oob=mpi", "--json"});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*b, (Args{"-t", "ud", "--json"}));
  // After "--" nothing is an option.
  EXPECT_FALSE(MeshArgs({"--", "--oob", "mpi"}).has_value());
}

TEST(MeshHandoff, LooksForQpMeshNextToItselfThenInTheBuildTreeThenOnThePath) {
  EXPECT_EQ(MeshCandidates("/opt/q/bin", nullptr),
            (Args{"/opt/q/bin/qp-mesh", "/opt/q/bin/../qp-mesh/qp-mesh", "qp-mesh"}));
  EXPECT_EQ(MeshCandidates("/opt/q/bin", "/x/qp-mesh"), (Args{"/x/qp-mesh"}));
  EXPECT_EQ(MeshCandidates("", ""), (Args{"qp-mesh"}));
}

TEST(MeshHandoff, AMissingQpMeshIsAUsageErrorNamingWhatWasTried) {
  ASSERT_EQ(setenv("QPC_QP_MESH", "/nonexistent/qp-mesh", 1), 0);
  std::ostringstream out, err;
  const int rc = RunQpConnect({"--oob", "mpi", "-q", "2"}, out, err);
  unsetenv("QPC_QP_MESH");
  EXPECT_EQ(rc, kExitUsage);
  EXPECT_NE(err.str().find("/nonexistent/qp-mesh"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("QPC_QP_MESH"), std::string::npos) << err.str();
}

TEST(MeshHandoff, HelpNamesTheMpiChannel) {
  std::ostringstream out, err;
  ASSERT_EQ(RunQpConnect({"--help"}, out, err), kExitOk);
  EXPECT_NE(out.str().find("tcp|file|stdio|mpi"), std::string::npos);
}

}  // namespace
}  // namespace qpconnect::tools
