// SPDX-License-Identifier: MIT
// A program for the preload's tests, linked against the fake libibverbs: it
// makes the calls a verbs program makes and checks that each returns what the
// fake returns, with errno as the fake left it, traced or not.
//
//   trace_probe MODE [EXIT_STATUS]
//   MODE: basic    one RC QP: INIT, a refused RTR (path_mtu 4096), RTR, RTS,
//                  destroy; a UD QP with an address handle; a failed create
//         fork     basic, then the same in a forked child
//         threads  8 threads x 25 QPs, each INIT/RTR/RTS/destroy
//         closefds basic, but first the program takes over every descriptor
//                  from 3 up with its own file (as daemons that close and
//                  reopen descriptors do), then checks its file holds only
//                  its own bytes
// Prints "probe ok" and exits with EXIT_STATUS (default 0); a mismatch prints
// "probe FAILED: ..." and exits 99.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kSuccessErrno = 77;  // what the fake leaves in errno on success

[[noreturn]] void Fail(const std::string& what) {
  std::printf("probe FAILED: %s\n", what.c_str());
  std::fflush(stdout);
  std::_Exit(99);
}

void Expect(bool ok, const std::string& what) {
  if (!ok) Fail(what);
}

struct Device {
  ibv_device device{};
  ibv_context context{};
  ibv_pd pd{};
  Device() {
    std::strcpy(device.name, "fake0");
    context.device = &device;
    pd.context = &context;
  }
};

void ConnectOne(ibv_pd& pd, bool with_failure) {
  ibv_qp_init_attr init{};
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 1;
  ibv_qp* qp = ibv_create_qp(&pd, &init);
  Expect(qp != nullptr, "create_qp");

  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  errno = 0;
  int rc =
      ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  Expect(rc == 0 && errno == kSuccessErrno,
         "INIT: rc " + std::to_string(rc) + " errno " + std::to_string(errno));

  ibv_qp_attr r{};
  r.qp_state = IBV_QPS_RTR;
  r.path_mtu = IBV_MTU_4096;
  r.dest_qp_num = 0x123;
  r.rq_psn = 5;
  r.max_dest_rd_atomic = 1;
  r.min_rnr_timer = 12;
  r.ah_attr.port_num = 1;
  r.ah_attr.is_global = 1;
  r.ah_attr.grh.sgid_index = 1;
  r.ah_attr.grh.dgid.raw[15] = 2;
  const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  if (with_failure) {
    errno = 0;
    rc = ibv_modify_qp(qp, &r, rtr_mask);
    Expect(rc == EINVAL && errno == EPERM,
           "refused RTR: rc " + std::to_string(rc) + " errno " + std::to_string(errno));
    Expect(qp->state == IBV_QPS_INIT, "state after a refused RTR");
  }
  r.path_mtu = IBV_MTU_1024;
  rc = ibv_modify_qp(qp, &r, rtr_mask);
  Expect(rc == 0 && errno == kSuccessErrno, "RTR");

  ibv_qp_attr s{};
  s.qp_state = IBV_QPS_RTS;
  s.sq_psn = 9;
  s.timeout = 14;
  s.retry_cnt = 7;
  s.rnr_retry = 7;
  s.max_rd_atomic = 1;
  rc = ibv_modify_qp(qp, &s,
                     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
  Expect(rc == 0 && qp->state == IBV_QPS_RTS, "RTS");
  Expect(ibv_destroy_qp(qp) == 0, "destroy_qp");
}

void Basic(Device& d) {
  ibv_gid gid{};
  Expect(ibv_query_gid(&d.context, 1, 1, &gid) == 0 && gid.raw[15] == 1, "query_gid");
  ConnectOne(d.pd, true);

  ibv_qp_init_attr init{};
  init.qp_type = IBV_QPT_UD;
  init.cap.max_send_wr = 1;
  ibv_qp* ud = ibv_create_qp(&d.pd, &init);
  Expect(ud != nullptr, "create UD");
  ibv_ah_attr ah{};
  ah.port_num = 1;
  ah.is_global = 1;
  ah.grh.dgid.raw[15] = 3;
  Expect(ibv_create_ah(&d.pd, &ah) != nullptr, "create_ah");
  Expect(ibv_destroy_qp(ud) == 0, "destroy UD");

  init.cap.max_send_wr = 999;
  errno = 0;
  Expect(ibv_create_qp(&d.pd, &init) == nullptr && errno == ENOMEM, "failed create_qp");
}

void Threads(Device& d) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&d] {
      for (int i = 0; i < 25; ++i) ConnectOne(d.pd, false);
    });
  }
  for (std::thread& t : threads) t.join();
}

void CloseFds(Device& d) {
  // Start the trace (the preload opens its file at the first event)...
  ConnectOne(d.pd, false);
  // ...then take over every descriptor from 3 up with a file of our own.
  char path[] = "/tmp/trace_probe_XXXXXX";
  const int mine = mkstemp(path);
  Expect(mine >= 0, "mkstemp");
  unlink(path);
  DIR* dir = opendir("/proc/self/fd");
  Expect(dir != nullptr, "opendir");
  std::vector<int> fds;
  while (dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd > 2 && fd != mine && fd != dirfd(dir)) fds.push_back(fd);
  }
  closedir(dir);
  for (int fd : fds) {
    close(fd);
    Expect(dup2(mine, fd) == fd, "dup2");
  }
  const char kOwn[] = "the program's own bytes\n";
  Expect(write(mine, kOwn, sizeof kOwn - 1) == sizeof kOwn - 1, "write");
  ConnectOne(d.pd, true);
  char buf[4096];
  const ssize_t n = pread(mine, buf, sizeof buf, 0);
  Expect(n == static_cast<ssize_t>(sizeof kOwn - 1) && std::memcmp(buf, kOwn, sizeof kOwn - 1) == 0,
         "the program's file holds " + std::to_string(n) + " bytes, not only its own");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "basic";
  const int status = argc > 2 ? std::atoi(argv[2]) : 0;
  Device d;
  if (mode == "basic") {
    Basic(d);
  } else if (mode == "fork") {
    Basic(d);
    const pid_t child = fork();
    Expect(child >= 0, "fork");
    if (child == 0) {
      Basic(d);
      std::exit(0);
    }
    int st = 0;
    Expect(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child");
  } else if (mode == "threads") {
    Threads(d);
  } else if (mode == "closefds") {
    CloseFds(d);
  } else {
    Fail("unknown mode " + mode);
  }
  std::printf("probe ok\n");
  return status;
}
