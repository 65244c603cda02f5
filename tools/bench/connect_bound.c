// SPDX-License-Identifier: MIT
/* The verbs bound for connecting N RC QP pairs (issue 15, tools/bench/connect.sh).
 *
 * Plain libibverbs, no qpconnect code: one thread opens two devices, creates
 * N RC QPs on each, and moves every QP RESET->INIT->RTR->RTS against its
 * partner on the other device, with no exchange (both sides are in this
 * process). Queue sizes are qp-connect's defaults (2 send WRs, 16 receive
 * WRs, one SGE), so the two do the same verbs work; no receive is posted.
 * Prints one line: the time of each step over all 2 x N QPs, the total from
 * the first create to the last RTS, and pairs per second. Then destroys
 * everything (timed apart).
 *
 * --cm-shape: each QP as librdmacm's rdma_create_qp makes it for a program
 * that passes no CQs (cmtime): two completion channels, a send and a receive
 * CQ of one entry each, and a QP of one send and one receive WR. Those
 * channels and CQs are created in the QP's create step. As cmtime creates
 * the client's QPs in a step of its own before it connects, DEV1's QPs are
 * then created before the clock starts: the timed create step is DEV0's
 * (the server's, which creates a QP for each connection request), and the
 * total is what cmtime's "connect" step cannot do without.
 * --two-threads: each device's side of a step runs on its own thread (the
 * two sides of a connection are two processes on two vCPUs in the lab); the
 * steps stay in order (every QP of both sides created before any INIT, ...).
 *
 * Usage: connect_bound N DEV0 GID0 DEV1 GID1 [PORT] [--cm-shape] [--two-threads]
 */
#define _POSIX_C_SOURCE 200809L
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct side {
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_cq *cq;
  struct ibv_qp **qps;
  /* --cm-shape: per QP, [2i] for sends and [2i + 1] for receives. */
  struct ibv_comp_channel **channels;
  struct ibv_cq **cqs;
  union ibv_gid gid;
  int gid_index;
  enum ibv_mtu mtu;
};

static int cm_shape = 0;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static struct ibv_context *open_named(const char *name) {
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  struct ibv_context *ctx = NULL;
  if (list == NULL) die("ibv_get_device_list");
  for (int i = 0; i < n; ++i) {
    if (strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  if (ctx == NULL) {
    fprintf(stderr, "connect_bound: cannot open %s\n", name);
    exit(1);
  }
  return ctx;
}

static void open_side(struct side *s, const char *dev, int gid_index, uint8_t port, int n) {
  struct ibv_port_attr pa;
  s->ctx = open_named(dev);
  s->gid_index = gid_index;
  if (ibv_query_port(s->ctx, port, &pa)) die("ibv_query_port");
  s->mtu = pa.active_mtu;
  if (ibv_query_gid(s->ctx, port, gid_index, &s->gid)) die("ibv_query_gid");
  s->pd = ibv_alloc_pd(s->ctx);
  if (s->pd == NULL) die("ibv_alloc_pd");
  /* One small CQ: nothing is posted, so nothing completes. */
  s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
  if (s->cq == NULL) die("ibv_create_cq");
  s->qps = calloc((size_t)n, sizeof *s->qps);
  s->channels = calloc(2 * (size_t)n, sizeof *s->channels);
  s->cqs = calloc(2 * (size_t)n, sizeof *s->cqs);
  if (s->qps == NULL || s->channels == NULL || s->cqs == NULL) die("calloc");
}

/* librdmacm's ucma_create_cqs for a QP of one send and one receive WR. */
static void create_cm_cqs(struct side *s, int i, struct ibv_qp_init_attr *a) {
  for (int k = 0; k < 2; ++k) {
    s->channels[2 * i + k] = ibv_create_comp_channel(s->ctx);
    if (s->channels[2 * i + k] == NULL) die("ibv_create_comp_channel");
    s->cqs[2 * i + k] = ibv_create_cq(s->ctx, 1, NULL, s->channels[2 * i + k], 0);
    if (s->cqs[2 * i + k] == NULL) die("ibv_create_cq");
  }
  a->send_cq = s->cqs[2 * i];
  a->recv_cq = s->cqs[2 * i + 1];
  a->cap.max_send_wr = 1;
  a->cap.max_recv_wr = 1;
}

static void create_qps(struct side *s, int n) {
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_init_attr a;
    memset(&a, 0, sizeof a);
    a.send_cq = s->cq;
    a.recv_cq = s->cq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = 2;
    a.cap.max_recv_wr = 16;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    a.sq_sig_all = 1;
    if (cm_shape) create_cm_cqs(s, i, &a);
    s->qps[i] = ibv_create_qp(s->pd, &a);
    if (s->qps[i] == NULL) die("ibv_create_qp");
  }
}

static void to_init(struct side *s, int n, uint8_t port) {
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (ibv_modify_qp(s->qps[i], &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
      die("ibv_modify_qp INIT");
  }
}

static void to_rtr(struct side *s, const struct side *peer, int n, uint8_t port) {
  enum ibv_mtu mtu = s->mtu < peer->mtu ? s->mtu : peer->mtu;
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu;
    a.dest_qp_num = peer->qps[i]->qp_num;
    a.rq_psn = (uint32_t)i;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer->gid;
    a.ah_attr.grh.sgid_index = (uint8_t)s->gid_index;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = port;
    if (ibv_modify_qp(s->qps[i], &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                          IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      die("ibv_modify_qp RTR");
  }
}

static void to_rts(struct side *s, int n) {
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = (uint32_t)i;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(s->qps[i], &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
      die("ibv_modify_qp RTS");
  }
}

static void destroy_side(struct side *s, int n) {
  for (int i = 0; i < n; ++i)
    if (ibv_destroy_qp(s->qps[i])) die("ibv_destroy_qp");
  for (int i = 0; cm_shape && i < 2 * n; ++i) {
    if (ibv_destroy_cq(s->cqs[i])) die("ibv_destroy_cq");
    if (ibv_destroy_comp_channel(s->channels[i])) die("ibv_destroy_comp_channel");
  }
  if (ibv_destroy_cq(s->cq)) die("ibv_destroy_cq");
  if (ibv_dealloc_pd(s->pd)) die("ibv_dealloc_pd");
  if (ibv_close_device(s->ctx)) die("ibv_close_device");
  free(s->qps);
  free(s->channels);
  free(s->cqs);
}

/* One step for one side, so that --two-threads can run both sides at once. */
enum step { STEP_CREATE, STEP_INIT, STEP_RTR, STEP_RTS };
struct job {
  struct side *s;
  const struct side *peer;
  int n;
  uint8_t port;
  enum step step;
};

static void *run_job(void *arg) {
  struct job *j = arg;
  switch (j->step) {
    case STEP_CREATE: create_qps(j->s, j->n); break;
    case STEP_INIT: to_init(j->s, j->n, j->port); break;
    case STEP_RTR: to_rtr(j->s, j->peer, j->n, j->port); break;
    case STEP_RTS: to_rts(j->s, j->n); break;
  }
  return NULL;
}

static void run_step(struct side *a, struct side *b, int n, uint8_t port, enum step step,
                     int two_threads) {
  struct job ja = {a, b, n, port, step}, jb = {b, a, n, port, step};
  if (!two_threads) {
    run_job(&ja);
    run_job(&jb);
    return;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, run_job, &jb) != 0) die("pthread_create");
  run_job(&ja);
  if (pthread_join(t, NULL) != 0) die("pthread_join");
}

int main(int argc, char **argv) {
  int two_threads = 0, positional = 0;
  char *pos[7] = {0};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--cm-shape") == 0) {
      cm_shape = 1;
    } else if (strcmp(argv[i], "--two-threads") == 0) {
      two_threads = 1;
    } else if (positional < 6) {
      pos[positional++] = argv[i];
    } else {
      fprintf(stderr, "connect_bound: unexpected argument %s\n", argv[i]);
      return 2;
    }
  }
  if (positional < 5) {
    fprintf(stderr,
            "usage: connect_bound N DEV0 GID0 DEV1 GID1 [PORT] [--cm-shape] [--two-threads]\n");
    return 2;
  }
  int n = atoi(pos[0]);
  uint8_t port = (uint8_t)(positional > 5 ? atoi(pos[5]) : 1);
  if (n < 1) {
    fprintf(stderr, "connect_bound: N must be at least 1\n");
    return 2;
  }
  struct side a, b;
  double t0 = now_s();
  open_side(&a, pos[1], atoi(pos[2]), port, n);
  open_side(&b, pos[3], atoi(pos[4]), port, n);
  double t[5];
  if (cm_shape) create_qps(&b, n); /* cmtime's client step, before connecting */
  t[0] = now_s();
  for (int step = STEP_CREATE; step <= STEP_RTS; ++step) {
    if (cm_shape && step == STEP_CREATE) {
      create_qps(&a, n);
    } else {
      run_step(&a, &b, n, port, (enum step)step, two_threads);
    }
    t[step + 1] = now_s();
  }
  destroy_side(&a, n);
  destroy_side(&b, n);
  double t6 = now_s();
  double total = t[4] - t[0];
  printf("bound n=%d shape=%s threads=%d open_s=%.6f create_s=%.6f init_s=%.6f rtr_s=%.6f "
         "rts_s=%.6f total_s=%.6f pairs_per_s=%.1f destroy_s=%.6f\n",
         n, cm_shape ? "cm" : "qp-connect", two_threads ? 2 : 1, t[0] - t0, t[1] - t[0],
         t[2] - t[1], t[3] - t[2], t[4] - t[3], total, (double)n / total, t6 - t[4]);
  return 0;
}
