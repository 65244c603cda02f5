// SPDX-License-Identifier: MIT
// Test-only LD_PRELOAD shim: wraps rdma_disconnect and, at its first call,
// stops the process (SIGSTOP) before disconnecting, so that a program that
// connects and at once disconnects (cmtime) can be snapshotted with every
// connection established. A SIGCONT lets it go on unchanged. Says so on
// stderr. Used by lab_inspect_rdmacm_by_gid (inspect_lab.sh).
#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>

struct rdma_cm_id;

namespace {

using DisconnectFn = int (*)(rdma_cm_id*);

std::atomic<bool> paused{false};

}  // namespace

extern "C" int rdma_disconnect(rdma_cm_id* id) {
  static DisconnectFn next = reinterpret_cast<DisconnectFn>(dlsym(RTLD_NEXT, "rdma_disconnect"));
  if (next == nullptr) return ENOSYS;
  if (!paused.exchange(true)) {
    std::fprintf(stderr, "pause shim: stopped before the first rdma_disconnect\n");
    std::fflush(stderr);
    std::raise(SIGSTOP);
  }
  return next(id);
}
