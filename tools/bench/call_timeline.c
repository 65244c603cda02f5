// SPDX-License-Identifier: MIT
/* call_timeline.so: an LD_PRELOAD library that stamps the calls marking the
 * steps of one connection, for tools/bench/timeline.sh (issue 15,
 * docs/performance.md): where a one-pair client's and its server's time goes,
 * on one clock.
 *
 * At exit it prints to stderr one line per call, in call order:
 *   "CALL <ms> <thread> <what>"
 * <ms>: CLOCK_REALTIME in ms, minus START_EXEC_MS when that is set (by
 * start_exec, just before it forks: the client's clock then starts at its
 * fork; a first line "BASE <START_EXEC_MS>" then says where); <thread>: "main" or "t<N>" (the Nth
 * other thread seen); <what>: the call ("ibv_open_device", "modify RTR", "send", ...) and, for the
 * verbs steps, "/<call>" when it returned.
 *
 * Plain C, no qpconnect code; libibverbs' ibv_get_device_list() is left alone
 * (qp-connect finds libibverbs' provider directory from its address). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 4096
#define MAX_THREADS 16

static struct {
  double ms;
  int tid;
  const char* what;
} events[MAX_EVENTS];
static int n_events;
static int tids[MAX_THREADS];
static int n_tids;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void mark(const char* what) {
  const int i = __atomic_fetch_add(&n_events, 1, __ATOMIC_RELAXED);
  if (i >= MAX_EVENTS) return;
  events[i].ms = now_ms();
  events[i].tid = (int)syscall(SYS_gettid);
  events[i].what = what;
}

static const char* thread_name(int tid, char* buf, size_t size) {
  if (tid == getpid()) return "main";
  int k = 0;
  while (k < n_tids && tids[k] != tid) ++k;
  if (k == n_tids && n_tids < MAX_THREADS) tids[n_tids++] = tid;
  snprintf(buf, size, "t%d", k + 1);
  return buf;
}

__attribute__((destructor)) static void print_events(void) {
  mark("exit");
  const char* exec_ms = getenv("START_EXEC_MS");
  const double base = exec_ms != NULL ? atof(exec_ms) : 0;
  if (exec_ms != NULL) fprintf(stderr, "BASE %s\n", exec_ms);
  const int n = n_events < MAX_EVENTS ? n_events : MAX_EVENTS;
  for (int i = 0; i < n; ++i) {
    char buf[16];
    fprintf(stderr, "CALL %.2f %s %s\n", events[i].ms - base,
            thread_name(events[i].tid, buf, sizeof buf), events[i].what);
  }
}

typedef int (*main_fn)(int, char**, char**);
static main_fn real_main;

static int stamped_main(int argc, char** argv, char** envp) {
  mark("main");
  return real_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char** argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void* stack_end) {
  typedef int (*start_fn)(main_fn, int, char**, void (*)(void), void (*)(void), void (*)(void),
                          void*);
  real_main = main;
  start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
  return real(stamped_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* STAMPED(ret, name, params, args, returned): `name` marked on entry, and
 * "/name" on return when `returned` is 1. */
#define STAMPED(ret, name, params, args, returned)    \
  ret name params {                                   \
    static ret(*real) params;                         \
    if (real == NULL) real = dlsym(RTLD_NEXT, #name); \
    mark(#name);                                      \
    ret r = real args;                                \
    if (returned) mark("/" #name);                    \
    return r;                                         \
  }

STAMPED(struct ibv_context*, ibv_open_device, (struct ibv_device * d), (d), 1)
STAMPED(struct ibv_qp*, ibv_create_qp, (struct ibv_pd * pd, struct ibv_qp_init_attr* a), (pd, a), 1)
STAMPED(int, ibv_destroy_qp, (struct ibv_qp * qp), (qp), 1)
STAMPED(int, ibv_close_device, (struct ibv_context * ctx), (ctx), 1)
STAMPED(int, getifaddrs, (struct ifaddrs * *a), (a), 1)
STAMPED(int, connect, (int fd, const struct sockaddr* a, socklen_t l), (fd, a, l), 0)
STAMPED(ssize_t, send, (int fd, const void* b, size_t n, int f), (fd, b, n, f), 0)
STAMPED(ssize_t, sendto,
        (int fd, const void* b, size_t n, int f, const struct sockaddr* a, socklen_t l),
        (fd, b, n, f, a, l), 0)
STAMPED(int, shutdown, (int fd, int how), (fd, how), 0)

int ibv_modify_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int mask) {
  static int (*real)(struct ibv_qp*, struct ibv_qp_attr*, int);
  if (real == NULL) real = dlsym(RTLD_NEXT, "ibv_modify_qp");
  const int to = (mask & IBV_QP_STATE) ? (int)attr->qp_state : -1;
  mark(to == IBV_QPS_INIT  ? "modify INIT"
       : to == IBV_QPS_RTR ? "modify RTR"
       : to == IBV_QPS_RTS ? "modify RTS"
                           : "modify");
  const int r = real(qp, attr, mask);
  mark("/modify");
  return r;
}
