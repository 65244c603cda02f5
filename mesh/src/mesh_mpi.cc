// SPDX-License-Identifier: MIT
// MeshComm over MPI (mesh_mpi.h).
#include <mpi.h>

#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "qpconnect/mesh_mpi.h"

// Open MPI's handle macros (MPI_COMM_WORLD, MPI_CHAR, ...) are C casts.
#pragma GCC diagnostic ignored "-Wold-style-cast"

namespace qpconnect {
namespace {

Error MpiError(int rc, const char* call) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Error(ErrorCode::kIo, 0, call, "", std::string(text, static_cast<size_t>(len)));
}

class MpiMeshComm final : public MeshComm {
 public:
  ~MpiMeshComm() override {
    if (local_ != MPI_COMM_NULL) MPI_Comm_free(&local_);
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  Result<void> Init(MPI_Comm parent) {
    int rc = MPI_Comm_dup(parent, &comm_);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Comm_dup");
    // Errors come back as return codes, not as an abort of the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    rc = MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local_);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Comm_split_type");
    MPI_Comm_rank(local_, &local_rank_);
    return Ok();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }

  Result<std::vector<std::string>> AllToAll(const std::vector<std::string>& to_each) override {
    const size_t n = static_cast<size_t>(size_);
    if (to_each.size() != n) {
      return Error(ErrorCode::kInvalidArgument, 0, "MPI_Alltoallv", "",
                   "one part per rank is needed");
    }
    std::vector<int> send_counts(n), recv_counts(n), send_offsets(n), recv_offsets(n);
    for (size_t i = 0; i < n; ++i) QPC_TRY(Count(to_each[i].size(), &send_counts[i]));
    int rc = MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Alltoall");
    std::string send;
    for (size_t i = 0; i < n; ++i) {
      QPC_TRY(Count(send.size(), &send_offsets[i]));
      send += to_each[i];
    }
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      if (recv_counts[i] < 0)
        return Error(ErrorCode::kProtocol, 0, "MPI_Alltoall", "", "negative count");
      QPC_TRY(Count(total, &recv_offsets[i]));
      total += static_cast<size_t>(recv_counts[i]);
    }
    std::string recv(total, '\0');
    rc = MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_CHAR, recv.data(),
                       recv_counts.data(), recv_offsets.data(), MPI_CHAR, comm_);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Alltoallv");
    std::vector<std::string> out(n);
    for (size_t i = 0; i < n; ++i) {
      out[i] =
          recv.substr(static_cast<size_t>(recv_offsets[i]), static_cast<size_t>(recv_counts[i]));
    }
    return out;
  }

  Result<std::vector<std::string>> AllGather(const std::string& mine) override {
    const size_t n = static_cast<size_t>(size_);
    int count = 0;
    QPC_TRY(Count(mine.size(), &count));
    std::vector<int> counts(n), offsets(n);
    int rc = MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Allgather");
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      if (counts[i] < 0)
        return Error(ErrorCode::kProtocol, 0, "MPI_Allgather", "", "negative count");
      QPC_TRY(Count(total, &offsets[i]));
      total += static_cast<size_t>(counts[i]);
    }
    std::string all(total, '\0');
    rc = MPI_Allgatherv(mine.data(), count, MPI_CHAR, all.data(), counts.data(), offsets.data(),
                        MPI_CHAR, comm_);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Allgatherv");
    std::vector<std::string> out(n);
    for (size_t i = 0; i < n; ++i) {
      out[i] = all.substr(static_cast<size_t>(offsets[i]), static_cast<size_t>(counts[i]));
    }
    return out;
  }

 private:
  // MPI counts are int: more than 2 GiB in one collective is refused.
  static Result<void> Count(size_t bytes, int* out) {
    if (bytes > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return Error(ErrorCode::kInvalidArgument, 0, "mesh collective", "",
                   std::to_string(bytes) + " bytes exceed MPI's int count");
    }
    *out = static_cast<int>(bytes);
    return Ok();
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm local_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 0, local_rank_ = 0;
};

}  // namespace

Result<std::unique_ptr<MeshComm>> MakeMpiMeshComm(MPI_Comm comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    return Error(ErrorCode::kInvalidArgument, 0, "mesh", "", "MPI is not initialized (MPI_Init)");
  }
  auto c = std::make_unique<MpiMeshComm>();
  QPC_TRY(c->Init(comm));
  return std::unique_ptr<MeshComm>(std::move(c));
}

Result<std::unique_ptr<MeshComm>> MakeMpiWorldMeshComm() { return MakeMpiMeshComm(MPI_COMM_WORLD); }

}  // namespace qpconnect
